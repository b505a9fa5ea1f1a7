import { useEffect, useMemo, useState } from 'react';
import { App, Button, Card, DatePicker, Dropdown, Input, InputNumber, Select, Space, Table, Tag, Tooltip, Typography } from 'antd';
import type { TableProps } from 'antd';
import { DownloadOutlined, ClearOutlined, MailOutlined } from '@ant-design/icons';
import dayjs from 'dayjs';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { usePaged } from '../lib/usePaged';
import type { Key } from '../i18n/dict';
import { EmptyState, ErrorState, errorMessage } from '../components/States';
import { KindTag, ScoreBar, StatusTag } from '../components/Tags';
import { chapterLabel, dateTime } from '../lib/format';
import { filtersToQuery, queryToFilters, sortOf } from '../lib/filters';
import { openHtml, saveBlob } from '../lib/download';
import { DraftNoticeModal, type DraftInitial } from '../components/DraftNotice';
import { draftFromMatches } from '../lib/takedown';
import { MATCH_KINDS, REVIEW_STATUSES, type MatchFilters, type MatchItem, type ReviewStatus, type WorkItem } from '../api/types';

export function Matches() {
  const { t, lang } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const { message } = App.useApp();
  const [params, setParams] = useSearchParams();
  const filters = useMemo(() => queryToFilters(params), [params]);
  const filterKey = filtersToQuery(filters).toString();

  const [selected, setSelected] = useState<number[]>([]);
  const [works, setWorks] = useState<WorkItem[]>([]);
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState<DraftInitial | null>(null);
  const navigate = useNavigate();

  useEffect(() => {
    api.works({ limit: 500 }).then((p) => setWorks(p.items), () => setWorks([]));
  }, [api]);

  const { items, cursor, loading, error, loadMore, reload } = usePaged(
    (cursor) => api.matches(filters, cursor ?? null, 100),
    [api, filterKey],
  );
  // Another filter shows other rows: nothing stays selected.
  useEffect(() => setSelected([]), [api, filterKey]);

  const update = (patch: Partial<MatchFilters>) => {
    const next = { ...filters, ...patch };
    for (const k of Object.keys(patch) as (keyof MatchFilters)[]) if (patch[k] === undefined || patch[k] === null) delete next[k];
    setParams(filtersToQuery(next), { replace: true });
  };

  const bulk = async (status: ReviewStatus) => {
    setBusy(true);
    try {
      const r = await api.bulkReview(selected, status);
      let text = t('matches.bulkDone', { updated: r.updated.length, unchanged: r.unchanged.length });
      if (r.not_found.length) text += t('matches.bulkNotFound', { n: r.not_found.length });
      if (r.licensed?.length) text += t('matches.bulkLicensed', { n: r.licensed.length });
      message.success(text);
      setSelected([]);
      reload();
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setBusy(false);
    }
  };

  const exportAs = async (format: 'csv' | 'xlsx' | 'report' | 'reportPdf') => {
    try {
      if (format === 'report' || format === 'reportPdf') {
        if (filters.work_id === undefined) {
          message.info(t('matches.reportNeedsWork'));
          return;
        }
        if (format === 'report') {
          openHtml(await api.workReport(filters.work_id, lang, filters));
        } else {
          const { blob, filename } = await api.workReportPdf(filters.work_id, lang, filters);
          saveBlob(blob, filename);
          message.success(t('matches.exported', { file: filename }));
        }
        return;
      }
      const { blob, filename } = await api.exportMatches(format, filters);
      saveBlob(blob, filename);
      message.success(t('matches.exported', { file: filename }));
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  const sortState = (key: string) => {
    const s = filters.sort ?? '-last_seen';
    if (s === key) return 'ascend' as const;
    if (s === `-${key}`) return 'descend' as const;
    return null;
  };

  const onTableChange: TableProps<MatchItem>['onChange'] = (_p, _f, sorter) => {
    const s = Array.isArray(sorter) ? sorter[0] : sorter;
    update({ sort: sortOf(s?.columnKey as string | undefined, s?.order) });
  };

  const columns: TableProps<MatchItem>['columns'] = [
    { title: t('matches.work'), dataIndex: 'work_title', key: 'work', width: 200, ellipsis: true, render: (v: string, r) => <Link to={`/works/${r.work_id}`}>{v}</Link> },
    {
      title: t('matches.chapter'),
      key: 'chapter',
      width: 90,
      render: (_: unknown, r) => (
        <Tooltip title={r.section_title}>
          <span>{chapterLabel(lang, r.section_ordinal)}</span>
        </Tooltip>
      ),
    },
    { title: t('matches.site'), dataIndex: 'site', key: 'site', width: 140, ellipsis: true },
    {
      title: t('matches.url'),
      dataIndex: 'url',
      key: 'url',
      width: 220,
      ellipsis: true,
      render: (u: string) => (
        <a href={u} target="_blank" rel="noreferrer noopener">{u}</a>
      ),
    },
    { title: t('matches.kind'), dataIndex: 'kind', key: 'kind', width: 110, render: (k: string) => <KindTag kind={k} /> },
    { title: t('matches.score'), dataIndex: 'score', key: 'score', width: 140, sorter: true, sortOrder: sortState('score'), render: (s: number) => <ScoreBar score={s} /> },
    { title: t('matches.firstSeen'), dataIndex: 'first_seen', key: 'first_seen', width: 140, sorter: true, sortOrder: sortState('first_seen'), render: dateTime },
    { title: t('matches.lastSeen'), dataIndex: 'last_seen', key: 'last_seen', width: 140, sorter: true, sortOrder: sortState('last_seen'), render: dateTime },
    { title: t('matches.status'), dataIndex: 'status', key: 'status', width: 120, render: (s: ReviewStatus) => <StatusTag status={s} /> },
    {
      title: t('matches.actions'),
      key: 'actions',
      width: 100,
      fixed: 'right',
      render: (_: unknown, r) => <Link to={`/matches/${r.id}`} data-testid="evidence-link">{t('matches.evidence')}</Link>,
    },
  ];

  const dates = filters.from || filters.to ? ([filters.from ? dayjs(filters.from) : null, filters.to ? dayjs(filters.to) : null] as const) : null;

  return (
    <div data-testid="page-matches">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>{t('matches.title')}</Typography.Title>
        <Space wrap>
        <Tooltip title={draftFromMatches(filters, items, selected) ? undefined : t('draft.needSite')}>
          <Button
            icon={<MailOutlined />}
            disabled={!draftFromMatches(filters, items, selected)}
            onClick={() => setDraft(draftFromMatches(filters, items, selected))}
            data-testid="draft-notice"
          >
            {t('notices.draft')}
          </Button>
        </Tooltip>
        <Dropdown
          menu={{
            items: [
              { key: 'csv', label: <span data-testid="export-csv">{t('matches.exportCsv')}</span> },
              { key: 'xlsx', label: t('matches.exportXlsx') },
              { key: 'report', label: t('matches.exportReport'), disabled: filters.work_id === undefined },
              { key: 'reportPdf', label: t('matches.exportReportPdf'), disabled: filters.work_id === undefined },
            ],
            onClick: ({ key }) => void exportAs(key as 'csv' | 'xlsx' | 'report' | 'reportPdf'),
          }}
        >
          <Button icon={<DownloadOutlined />} data-testid="export">{t('matches.export')}</Button>
        </Dropdown>
        </Space>
      </Space>
      <Card>
        <Space wrap style={{ marginBottom: 16 }} data-testid="filters">
          <Select
            allowClear
            showSearch
            optionFilterProp="label"
            style={{ width: 220 }}
            placeholder={t('matches.filterWork')}
            value={filters.work_id}
            onChange={(v) => update({ work_id: v, section_id: undefined })}
            options={works.map((w) => ({ value: w.id, label: w.title }))}
            data-testid="filter-work"
          />
          <Input.Search
            allowClear
            key={`site-${filters.site ?? ''}`}
            defaultValue={filters.site}
            placeholder={t('matches.filterSite')}
            style={{ width: 200 }}
            onSearch={(v) => update({ site: v.trim() || undefined })}
            data-testid="filter-site"
          />
          {can('works.filterOwner') && (
            <Input.Search
              allowClear
              key={`owner-${filters.owner ?? ''}`}
              defaultValue={filters.owner}
              placeholder={t('works.owner')}
              style={{ width: 160 }}
              onSearch={(v) => update({ owner: v.trim() || undefined })}
            />
          )}
          <Select
            allowClear
            style={{ width: 140 }}
            placeholder={t('matches.filterKind')}
            value={filters.kind}
            onChange={(v) => update({ kind: v })}
            options={MATCH_KINDS.map((k) => ({ value: k, label: t(`kind.${k}` as Key) }))}
            data-testid="filter-kind"
          />
          <Select
            allowClear
            style={{ width: 150 }}
            placeholder={t('matches.filterStatus')}
            value={filters.status}
            onChange={(v) => update({ status: v })}
            options={REVIEW_STATUSES.map((s) => ({ value: s, label: t(`status.${s}` as Key) }))}
            data-testid="filter-status"
          />
          <InputNumber
            min={0}
            max={100}
            step={5}
            addonBefore={t('matches.minScore')}
            addonAfter="%"
            style={{ width: 210 }}
            value={filters.min_score !== undefined ? Math.round(filters.min_score * 100) : null}
            onChange={(v) => update({ min_score: v === null || v === undefined ? undefined : Number(v) / 100 })}
            data-testid="filter-min-score"
          />
          <DatePicker.RangePicker
            allowEmpty={[true, true]}
            value={dates as never}
            placeholder={[t('matches.dateRange'), t('matches.dateRange')]}
            onChange={(v) =>
              update({ from: v?.[0] ? v[0].format('YYYY-MM-DD') : undefined, to: v?.[1] ? v[1].format('YYYY-MM-DD') : undefined })
            }
          />
          {filters.section_id !== undefined && (
            <Tag closable onClose={() => update({ section_id: undefined })}>
              {t('matches.chapter')} #{filters.section_id}
            </Tag>
          )}
          <Button icon={<ClearOutlined />} onClick={() => setParams(new URLSearchParams(), { replace: true })} data-testid="filter-reset">
            {t('matches.reset')}
          </Button>
        </Space>
        {can('review') && selected.length > 0 && (
          <Space style={{ marginBottom: 12 }} data-testid="bulk-bar">
            <span>{t('matches.selected', { n: selected.length })}</span>
            <Button size="small" danger loading={busy} onClick={() => bulk('confirmed')} data-testid="bulk-confirm">{t('matches.bulkConfirm')}</Button>
            <Button size="small" loading={busy} onClick={() => bulk('dismissed')} data-testid="bulk-dismiss">{t('matches.bulkDismiss')}</Button>
            <Button size="small" loading={busy} onClick={() => bulk('takedown_sent')} data-testid="bulk-takedown">{t('matches.bulkTakedown')}</Button>
          </Space>
        )}
        {error !== undefined && !loading ? (
          <ErrorState error={error} onRetry={() => reload()} />
        ) : (
          <>
            <Table<MatchItem>
              rowKey="id"
              size="middle"
              loading={loading}
              dataSource={items}
              columns={columns}
              pagination={false}
              scroll={{ x: 1320 }}
              onChange={onTableChange}
              rowSelection={can('review') ? { selectedRowKeys: selected, onChange: (keys) => setSelected(keys as number[]) } : undefined}
              locale={{ emptyText: loading ? ' ' : <EmptyState title={t('matches.empty')} hint={t('matches.emptyHint')} /> }}
              data-testid="matches-table"
            />
            <div style={{ textAlign: 'center', marginTop: 16, color: '#888' }}>
              <span data-testid="matches-count">{t('matches.count', { n: items.length })}</span>
              {cursor && (
                <Button style={{ marginLeft: 12 }} onClick={loadMore} loading={loading}>{t('matches.loadMore')}</Button>
              )}
            </div>
          </>
        )}
      </Card>
      <DraftNoticeModal
        open={draft !== null}
        initial={draft ?? {}}
        onClose={() => setDraft(null)}
        onDrafted={(n) => {
          setDraft(null);
          navigate(`/notices?id=${n.id}`);
        }}
      />
    </div>
  );
}
