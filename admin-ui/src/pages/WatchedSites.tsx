import { App, Button, Card, Form, Input, InputNumber, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import type { TableProps } from 'antd';
import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { WatchedEntryPoint, WatchedSite } from '../api/types';
import { useApiClient, useAuth } from '../auth';
import { EmptyState, Loadable, errorMessage } from '../components/States';
import { useI18n } from '../i18n/I18nProvider';
import { count, dateTime } from '../lib/format';
import { useLoad } from '../lib/useLoad';
import { usePolling } from '../lib/live';
import { siteSchedule, splitLines } from '../lib/watched';

/** How often the page reads the schedule again (visits move it on). */
const REFRESH_MS = 30_000;

/** `90 秒`, `5 分钟`, `2 小时` for an interval in seconds; `—` before the first visit. */
export function useInterval() {
  const { t } = useI18n();
  return (secs: number | null) => {
    if (secs === null || secs <= 0) return '—';
    if (secs < 120) return t('watched.seconds', { n: secs });
    if (secs < 7200) return t('watched.minutes', { n: Math.round(secs / 60) });
    return t('watched.hours', { n: Math.round((secs / 3600) * 10) / 10 });
  };
}

export function WatchedSites() {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const owner = can('holders.pick') ? params.get('owner') ?? '' : '';
  const state = useLoad(() => api.watchedSites(owner || undefined), [api, owner]);
  usePolling(state.reload, REFRESH_MS);

  return (
    <div data-testid="page-watched">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>{t('watched.title')}</Typography.Title>
        {can('holders.pick') && (
          <Input.Search
            allowClear
            key={`owner-${owner}`}
            defaultValue={owner}
            placeholder={t('removals.ownerAll')}
            style={{ width: 200 }}
            onSearch={(v) => {
              const next = new URLSearchParams(params);
              if (v.trim()) next.set('owner', v.trim());
              else next.delete('owner');
              setParams(next, { replace: true });
            }}
            data-testid="watched-owner"
          />
        )}
      </Space>
      <Typography.Paragraph type="secondary">{t('watched.intro')}</Typography.Paragraph>
      {can('works.write') && <AddSite onAdded={state.reload} />}
      <Loadable state={state}>{(d) => <SitesTable sites={d.items} onChanged={state.reload} />}</Loadable>
    </div>
  );
}

interface AddForm {
  owner?: string;
  entry_points: string;
  chapter_patterns?: string;
  min_delay_secs?: number | null;
}

function AddSite({ onAdded }: { onAdded: () => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { session } = useAuth();
  const { message } = App.useApp();
  const [form] = Form.useForm<AddForm>();
  const [busy, setBusy] = useState(false);
  const admin = session?.me.role === 'admin';

  const submit = async (v: AddForm) => {
    setBusy(true);
    try {
      const r = await api.addWatchedSite({
        owner: admin ? v.owner?.trim() : undefined,
        entry_points: splitLines(v.entry_points),
        chapter_patterns: splitLines(v.chapter_patterns ?? ''),
        min_delay_secs: v.min_delay_secs ?? undefined,
      });
      message.success(t(r.outcome === 'inserted' ? 'watched.added' : r.outcome === 'unchanged' ? 'watched.unchanged' : 'watched.updated', { host: r.site.host }));
      form.resetFields();
      onAdded();
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={t('watched.add')} style={{ marginBottom: 16 }} data-testid="watched-add">
      <Form<AddForm> form={form} layout="vertical" onFinish={(v) => void submit(v)} style={{ maxWidth: 720 }}>
        {admin && (
          <Form.Item name="owner" label={t('watched.owner')} rules={[{ required: true, whitespace: true, message: t('watched.ownerRequired') }]}>
            <Input data-testid="watched-add-owner" />
          </Form.Item>
        )}
        <Form.Item
          name="entry_points"
          label={t('watched.entryPoints')}
          extra={t('watched.entryPointsHint')}
          rules={[{ validator: (_: unknown, v?: string) => (splitLines(v ?? '').length > 0 ? Promise.resolve() : Promise.reject(new Error(t('watched.entryRequired')))) }]}
        >
          <Input.TextArea rows={3} placeholder="https://pirate.example/book/123/&#10;https://pirate.example/rss.xml" data-testid="watched-add-entries" />
        </Form.Item>
        <Form.Item name="chapter_patterns" label={t('watched.patterns')} extra={t('watched.patternsHint')}>
          <Input.TextArea rows={2} placeholder="/book/123/\d+\.html$" data-testid="watched-add-patterns" />
        </Form.Item>
        <Form.Item name="min_delay_secs" label={t('watched.politeness')} extra={t('watched.politenessHint')}>
          <InputNumber min={1} max={86400} style={{ width: 160 }} data-testid="watched-add-delay" />
        </Form.Item>
        <Button type="primary" htmlType="submit" icon={<PlusOutlined />} loading={busy} data-testid="watched-add-submit">
          {t('watched.addSubmit')}
        </Button>
      </Form>
    </Card>
  );
}

function SitesTable({ sites, onChanged }: { sites: WatchedSite[]; onChanged: () => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const { message } = App.useApp();
  const interval = useInterval();
  // Each row's schedule, summed once per list (several columns show it).
  const schedules = new Map(sites.map((s) => [s.id, siteSchedule(s)]));
  const schedule = (s: WatchedSite) => schedules.get(s.id) ?? siteSchedule(s);

  const remove = async (s: WatchedSite) => {
    try {
      await api.deleteWatchedSite(s.id);
      message.success(t('watched.removed', { host: s.host }));
      onChanged();
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  const columns: TableProps<WatchedSite>['columns'] = [
    { title: t('watched.host'), dataIndex: 'host', key: 'host', width: 200, ellipsis: true, render: (h: string) => <span data-testid="watched-host">{h}</span> },
    ...(can('holders.pick') ? [{ title: t('removals.holder'), dataIndex: 'holders', key: 'holders', width: 160, render: (h: string[]) => h.join('、') }] : []),
    { title: t('watched.entryCount'), key: 'entries', width: 90, render: (_: unknown, s) => count(s.entry_points.length) },
    { title: t('watched.lastVisit'), key: 'last', width: 150, render: (_: unknown, s) => dateTime(schedule(s).lastVisit) },
    { title: t('watched.nextVisit'), key: 'next', width: 150, render: (_: unknown, s) => <span data-testid="watched-next">{schedule(s).visits === 0 ? t('watched.dueNow') : dateTime(schedule(s).nextVisit)}</span> },
    { title: t('watched.interval'), key: 'interval', width: 100, render: (_: unknown, s) => interval(schedule(s).interval) },
    {
      title: t('watched.visits'),
      key: 'visits',
      width: 220,
      render: (_: unknown, s) => {
        const k = schedule(s);
        return (
          <span data-testid="watched-visits">
            {t('watched.visitsOf', { visits: count(k.visits), unchanged: count(k.notModified), fresh: count(k.withNew) })}
            {k.withCopies > 0 && (
              <Tag color="red" style={{ marginLeft: 6 }}>
                {t('watched.withCopies', { n: count(k.withCopies) })}
              </Tag>
            )}
          </span>
        );
      },
    },
    ...(can('works.write')
      ? [
          {
            title: '',
            key: 'actions',
            width: 90,
            render: (_: unknown, s: WatchedSite) => (
              <Popconfirm title={t('watched.removeConfirm', { host: s.host })} onConfirm={() => remove(s)} okButtonProps={{ 'data-testid': 'watched-remove-ok' }}>
                <Button size="small" type="link" danger icon={<DeleteOutlined />} data-testid="watched-remove">
                  {t('watched.remove')}
                </Button>
              </Popconfirm>
            ),
          },
        ]
      : []),
  ];

  return (
    <Card>
      <Table<WatchedSite>
        rowKey="id"
        size="small"
        pagination={false}
        dataSource={sites}
        columns={columns}
        data-testid="watched-table"
        locale={{ emptyText: <EmptyState title={t('watched.none')} hint={t('watched.noneHint')} /> }}
        expandable={{ expandedRowRender: (s) => <EntryPoints site={s} /> }}
      />
    </Card>
  );
}

function EntryPoints({ site }: { site: WatchedSite }) {
  const { t } = useI18n();
  const interval = useInterval();
  return (
    <div data-testid="watched-entries">
      <Table<WatchedEntryPoint>
        rowKey="url"
        size="small"
        pagination={false}
        dataSource={site.entry_points}
        columns={[
          { title: t('watched.entryUrl'), dataIndex: 'url', key: 'url', ellipsis: true },
          { title: t('watched.lastVisit'), dataIndex: 'last_visit', key: 'last', width: 150, render: dateTime },
          { title: t('watched.nextVisit'), dataIndex: 'next_visit', key: 'next', width: 150, render: (v: number, e) => (e.visits === 0 ? t('watched.dueNow') : dateTime(v)) },
          { title: t('watched.interval'), dataIndex: 'interval_secs', key: 'interval', width: 100, render: (v: number) => interval(v) },
          { title: t('watched.lastOutcome'), dataIndex: 'last_outcome', key: 'outcome', width: 200, ellipsis: true, render: (v: string | null) => v ?? '—' },
        ]}
      />
      {site.chapter_patterns.length > 0 && (
        <Typography.Paragraph type="secondary" style={{ marginTop: 8 }}>
          {t('watched.patterns')}:{' '}
          {site.chapter_patterns.map((p) => (
            <Typography.Text code key={p}>
              {p}
            </Typography.Text>
          ))}
        </Typography.Paragraph>
      )}
      <Typography.Paragraph type="secondary">
        {t('watched.politeness')}: {site.min_delay_secs === null ? t('watched.politenessDefault') : t('watched.seconds', { n: site.min_delay_secs })}
      </Typography.Paragraph>
    </div>
  );
}
