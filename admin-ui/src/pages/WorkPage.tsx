import { App, Button, Card, Descriptions, Popconfirm, Space, Table, Typography } from 'antd';
import { ArrowLeftOutlined, DeleteOutlined, FilePdfOutlined, FileTextOutlined } from '@ant-design/icons';
import { Link, useNavigate, useParams } from 'react-router-dom';
import type { EChartsOption } from 'echarts';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { useLoad } from '../lib/useLoad';
import { EmptyState, Loadable, errorMessage } from '../components/States';
import { Chart } from '../components/Chart';
import { chapterLabel, count, dateTime } from '../lib/format';
import { openHtml, saveBlob } from '../lib/download';
import type { SectionItem, WorkDetail } from '../api/types';

export function WorkPage() {
  const { id } = useParams();
  const api = useApiClient();
  const { t } = useI18n();
  const state = useLoad(() => api.work(Number(id)), [api, id]);
  return (
    <div data-testid="page-work">
      <Link to="/works"><ArrowLeftOutlined /> {t('work.back')}</Link>
      <Loadable state={state}>{(w) => <WorkBody work={w} />}</Loadable>
    </div>
  );
}

function WorkBody({ work }: { work: WorkDetail }) {
  const { t, lang } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const { message } = App.useApp();
  const navigate = useNavigate();

  const report = async () => {
    try {
      openHtml(await api.workReport(work.id, lang));
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };
  const reportPdf = async () => {
    try {
      const { blob, filename } = await api.workReportPdf(work.id, lang);
      saveBlob(blob, filename);
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };
  const remove = async () => {
    try {
      await api.deleteWork(work.id);
      message.success(t('work.deleted'));
      navigate('/works');
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  const chapterName = (s: SectionItem) => s.title || chapterLabel(lang, s.ordinal);
  const copied = work.sections.filter((s) => s.match_count > 0);
  const chart: EChartsOption = {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    grid: { left: 40, right: 16, top: 16, bottom: 60 },
    xAxis: { type: 'category', data: work.sections.map((s) => String(s.ordinal + 1)), name: t('work.chapter') },
    yAxis: { type: 'value', minInterval: 1 },
    dataZoom: work.sections.length > 60 ? [{ type: 'slider', start: 0, end: Math.round((60 / work.sections.length) * 100) }] : [],
    series: [{ type: 'bar', name: t('work.copies'), data: work.sections.map((s) => s.match_count), color: '#b8322a' }],
  };

  return (
    <>
      <Space style={{ width: '100%', justifyContent: 'space-between', margin: '12px 0' }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }} data-testid="work-title">{work.title}</Typography.Title>
        <Space>
          <Button icon={<FileTextOutlined />} onClick={report}>{t('work.report')}</Button>
          <Button icon={<FilePdfOutlined />} onClick={reportPdf} data-testid="report-pdf">{t('work.reportPdf')}</Button>
          {can('works.write') && (
            <Popconfirm title={t('work.deleteConfirm')} onConfirm={remove} okText={t('common.ok')} cancelText={t('common.cancel')} okButtonProps={{ danger: true }}>
              <Button danger icon={<DeleteOutlined />}>{t('work.delete')}</Button>
            </Popconfirm>
          )}
        </Space>
      </Space>
      <Card>
        <Descriptions column={{ xs: 1, md: 3 }} size="small">
          <Descriptions.Item label={t('works.author')}>{work.author || '—'}</Descriptions.Item>
          <Descriptions.Item label={t('works.owner')}>{work.owner}</Descriptions.Item>
          <Descriptions.Item label={t('works.externalId')}>{work.external_id}</Descriptions.Item>
          <Descriptions.Item label={t('work.chars')}>{count(work.chars)}</Descriptions.Item>
          <Descriptions.Item label={t('works.sections')}>{work.sections.length}</Descriptions.Item>
          <Descriptions.Item label={t('works.matches')}>
            {work.match_count > 0 ? <Link to={`/matches?work_id=${work.id}`}>{count(work.match_count)}</Link> : 0}
          </Descriptions.Item>
          <Descriptions.Item label={t('work.source')}>{work.source_file ?? '—'}</Descriptions.Item>
          <Descriptions.Item label={t('work.charset')}>{work.charset ?? '—'}</Descriptions.Item>
          <Descriptions.Item label={t('work.created')}>{dateTime(work.created_at)}</Descriptions.Item>
        </Descriptions>
      </Card>
      {work.sections.length > 1 && copied.length > 0 && (
        <Card title={t('work.chartTitle')} style={{ marginTop: 16 }}>
          <Chart option={chart} height={240} testId="chapter-chart" />
        </Card>
      )}
      <Card title={t('work.chapters')} style={{ marginTop: 16 }}>
        {work.match_count === 0 && <EmptyState title={t('work.noCopies')} />}
        <Table
          rowKey="id"
          size="small"
          dataSource={work.sections}
          pagination={work.sections.length > 50 ? { pageSize: 50 } : false}
          data-testid="sections-table"
          columns={[
            { title: '#', dataIndex: 'ordinal', width: 60, render: (o: number) => o + 1 },
            { title: t('work.chapter'), render: (_: unknown, s: SectionItem) => chapterName(s) },
            { title: t('work.chars'), dataIndex: 'chars', align: 'right', render: (c: number) => count(c) },
            {
              title: t('work.copies'),
              dataIndex: 'match_count',
              align: 'right',
              sorter: (a: SectionItem, b: SectionItem) => a.match_count - b.match_count,
              render: (c: number, s: SectionItem) =>
                c > 0 ? <Link to={`/matches?work_id=${work.id}&section_id=${s.id}`}>{count(c)}</Link> : <span style={{ color: '#bbb' }}>0</span>,
            },
          ]}
        />
      </Card>
    </>
  );
}
