import { Alert, Button, Card, Checkbox, Col, Descriptions, Drawer, Input, Row, Select, Space, Statistic, Table, Tag, Timeline, Typography } from 'antd';
import type { TableProps } from 'antd';
import { FlagOutlined } from '@ant-design/icons';
import { Link, useSearchParams } from 'react-router-dom';
import { REMOVAL_STATES, type RemovalDetail, type RemovalFigures, type RemovalState, type RemovalStats, type RemovalWatch } from '../api/types';
import { useApiClient, useAuth } from '../auth';
import { EmptyState, ErrorState, LoadingState } from '../components/States';
import { NoticeStateTag, RemovalStateTag } from '../components/Tags';
import type { Key } from '../i18n/dict';
import { useI18n } from '../i18n/I18nProvider';
import { usePaged } from '../lib/usePaged';
import { count, dateTime, percent } from '../lib/format';
import { useLoad } from '../lib/useLoad';
import { hoursParts, noticeReference, timeline } from '../lib/takedown';

/** `36 分钟`, `5.2 小时`, `3.1 天`; `—` when unknown. */
export function useHours() {
  const { t } = useI18n();
  return (h: number | null | undefined) => {
    const p = hoursParts(h);
    return p ? `${p.value} ${t(`unit.${p.unit}` as Key)}` : '—';
  };
}

export function Removals() {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const owner = can('holders.pick') ? params.get('owner') ?? '' : '';
  const state = (REMOVAL_STATES as string[]).includes(params.get('state') ?? '') ? (params.get('state') as RemovalState) : undefined;
  const flagged = params.get('flagged') === '1';
  const site = params.get('site') ?? '';
  const openPage = Number(params.get('page') ?? '') || null;

  const stats = useLoad(() => api.removalStats(owner || undefined), [api, owner]);

  const { items, cursor, loading, error, loadMore, reload } = usePaged(
    (cursor) => api.removals({ owner: owner || undefined, state, flagged: flagged ? true : undefined, site: site || undefined, cursor, limit: 100 }),
    [api, owner, state, flagged, site],
  );

  const setQuery = (patch: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next, { replace: true });
  };

  const columns: TableProps<RemovalWatch>['columns'] = [
    {
      title: t('removals.url'),
      dataIndex: 'url',
      key: 'url',
      width: 300,
      ellipsis: true,
      render: (u: string, w) => (
        <a onClick={() => setQuery({ page: String(w.page_id) })} data-testid="timeline-link" title={u}>
          {u}
        </a>
      ),
    },
    { title: t('removals.site'), dataIndex: 'site', key: 'site', width: 140, ellipsis: true },
    ...(can('holders.pick') ? [{ title: t('removals.holder'), dataIndex: 'owner', key: 'owner', width: 130 }] : []),
    {
      title: t('removals.stateCol'),
      key: 'state',
      width: 190,
      render: (_: unknown, w) => (
        <Space size={4}>
          <RemovalStateTag state={w.state} />
          {w.flagged_at !== null && (
            <Tag color="magenta" icon={<FlagOutlined />} data-testid="flagged-tag">
              {t('removals.flagged')}
            </Tag>
          )}
        </Space>
      ),
    },
    { title: t('removals.removedAt'), dataIndex: 'removed_at', key: 'removed', width: 140, render: (v: number | null) => <span data-testid="removed-at">{dateTime(v)}</span> },
    { title: t('removals.lastChecked'), dataIndex: 'last_checked_at', key: 'checked', width: 140, render: dateTime },
    { title: t('removals.checks'), dataIndex: 'checks', key: 'checks', width: 80 },
  ];

  return (
    <div data-testid="page-removals">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>{t('removals.title')}</Typography.Title>
        {can('holders.pick') && (
          <Input.Search allowClear key={`owner-${owner}`} defaultValue={owner} placeholder={t('removals.ownerAll')} style={{ width: 200 }} onSearch={(v) => setQuery({ owner: v.trim() || undefined })} data-testid="removals-owner" />
        )}
      </Space>
      {stats.error !== undefined && !stats.loading ? (
        <ErrorState error={stats.error} onRetry={stats.reload} />
      ) : stats.data ? (
        <RemovalStatsView stats={stats.data} perHolder={can('holders.pick')} onSite={(s) => setQuery({ site: s })} />
      ) : (
        <LoadingState />
      )}
      <Card title={t('removals.pages')} style={{ marginTop: 16 }}>
        <Space wrap style={{ marginBottom: 16 }}>
          <Select
            allowClear
            style={{ width: 180 }}
            placeholder={t('removals.filterState')}
            value={state}
            onChange={(v?: string) => setQuery({ state: v })}
            options={REMOVAL_STATES.map((s) => ({ value: s, label: t(`removals.state.${s}` as Key) }))}
            data-testid="removals-filter-state"
          />
          <Checkbox checked={flagged} onChange={(e) => setQuery({ flagged: e.target.checked ? '1' : undefined })} data-testid="removals-filter-flagged">
            {t('removals.filterFlagged')}
          </Checkbox>
          <Input.Search allowClear key={`site-${site}`} defaultValue={site} placeholder={t('notices.filterSite')} style={{ width: 200 }} onSearch={(v) => setQuery({ site: v.trim().toLowerCase() || undefined })} />
        </Space>
        {error !== undefined && !loading ? (
          <ErrorState error={error} onRetry={() => reload()} />
        ) : (
          <>
            <Table<RemovalWatch>
              rowKey="page_id"
              size="middle"
              loading={loading}
              dataSource={items}
              columns={columns}
              pagination={false}
              scroll={{ x: 1100 }}
              locale={{ emptyText: loading ? ' ' : <EmptyState title={t('removals.empty')} hint={t('removals.emptyHint')} /> }}
              data-testid="removals-table"
            />
            {cursor && (
              <div style={{ textAlign: 'center', marginTop: 16 }}>
                <Button onClick={loadMore} loading={loading}>{t('matches.loadMore')}</Button>
              </div>
            )}
          </>
        )}
      </Card>
      <Drawer open={openPage !== null} width={640} onClose={() => setQuery({ page: undefined })} title={t('removals.timeline')} destroyOnClose>
        {openPage !== null && <WatchTimeline pageId={openPage} />}
      </Drawer>
    </div>
  );
}

/** The totals, and the per-site (and per-holder) tables. */
export function RemovalStatsView({ stats, perHolder, onSite }: { stats: RemovalStats; perHolder: boolean; onSite?: (site: string) => void }) {
  const { t } = useI18n();
  const hours = useHours();
  const f = stats.total;
  const figureColumns = (keyTitle: string, testId: string): TableProps<RemovalFigures>['columns'] => [
    {
      title: keyTitle,
      dataIndex: 'key',
      key: 'key',
      ellipsis: true,
      render: (k: string) => (onSite && testId === 'site' ? <a onClick={() => onSite(k)}>{k}</a> : k),
    },
    { title: t('removals.delivered'), dataIndex: 'notices_delivered', key: 'delivered', width: 100 },
    { title: t('removals.noticed'), dataIndex: 'pages_noticed', key: 'noticed', width: 100 },
    { title: t('removals.removed'), dataIndex: 'pages_removed', key: 'removed', width: 90 },
    { title: t('removals.rate'), dataIndex: 'removal_rate', key: 'rate', width: 90, render: (r: number | null) => percent(r) },
    { title: t('removals.median'), dataIndex: 'median_hours_to_removal', key: 'median', width: 130, render: hours },
    { title: t('removals.p90'), dataIndex: 'p90_hours_to_removal', key: 'p90', width: 130, render: hours },
    { title: t('removals.stillUp'), dataIndex: 'pages_still_up', key: 'up', width: 90 },
    { title: t('removals.flagged'), dataIndex: 'pages_flagged', key: 'flagged', width: 110 },
    { title: t('removals.licensedVsInfringing'), key: 'li', width: 150, render: (_: unknown, r) => `${count(r.matches_licensed)} / ${count(r.matches_infringing)}` },
  ];
  return (
    <div data-testid="removal-stats">
      <Typography.Paragraph type="secondary">{t('removals.statsAt', { at: dateTime(stats.at) })}</Typography.Paragraph>
      {f.notices_delivered === 0 && <Alert type="info" showIcon message={t('removals.noStats')} style={{ marginBottom: 16 }} />}
      <Row gutter={[16, 16]}>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-removal-rate">
            <Statistic title={t('removals.rate')} value={percent(f.removal_rate)} />
            <Typography.Text type="secondary" data-testid="removal-rate-of">
              {t('removals.rateOf', { removed: f.pages_removed, noticed: f.pages_noticed })}
            </Typography.Text>
          </Card>
        </Col>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-median">
            <Statistic title={t('removals.median')} value={hours(f.median_hours_to_removal)} />
          </Card>
        </Col>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-p90">
            <Statistic title={t('removals.p90')} value={hours(f.p90_hours_to_removal)} />
          </Card>
        </Col>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-still-up">
            <Statistic title={t('removals.stillUp')} value={f.pages_still_up} />
            {f.pages_unchecked > 0 && <Typography.Text type="secondary">{`${t('removals.unchecked')} ${f.pages_unchecked}`}</Typography.Text>}
          </Card>
        </Col>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-flagged">
            <Statistic title={t('removals.flagged')} value={f.pages_flagged} valueStyle={f.pages_flagged ? { color: '#c41d7f' } : undefined} />
          </Card>
        </Col>
        <Col xs={12} md={8} xl={4}>
          <Card data-testid="stat-licensed">
            <Statistic title={t('removals.licensedVsInfringing')} value={`${count(f.matches_licensed)} / ${count(f.matches_infringing)}`} />
          </Card>
        </Col>
      </Row>
      <Card title={t('removals.bySite')} size="small" style={{ marginTop: 16 }}>
        <Table<RemovalFigures> rowKey="key" size="small" pagination={false} dataSource={stats.by_site} columns={figureColumns(t('removals.site'), 'site')} scroll={{ x: 1100 }} data-testid="removals-by-site" />
      </Card>
      {perHolder && (
        <Card title={t('removals.byHolder')} size="small" style={{ marginTop: 16 }}>
          <Table<RemovalFigures> rowKey="key" size="small" pagination={false} dataSource={stats.by_holder} columns={figureColumns(t('removals.holder'), 'holder')} scroll={{ x: 1100 }} data-testid="removals-by-holder" />
        </Card>
      )}
    </div>
  );
}

/** A watched page: what it is, the notices sent about it, and every transition with its time. */
export function WatchTimeline({ pageId }: { pageId: number }) {
  const { t } = useI18n();
  const api = useApiClient();
  const d = useLoad(() => api.removal(pageId), [api, pageId]);
  if (d.error !== undefined && !d.loading) return <ErrorState error={d.error} onRetry={d.reload} />;
  if (!d.data) return <LoadingState />;
  const w: RemovalDetail = d.data;
  const stateWord = (s: RemovalState | null) => (s ? t(`removals.state.${s}` as Key) : '—');
  return (
    <div data-testid="watch-detail" data-page-id={w.page_id}>
      <Descriptions column={1} size="small" bordered>
        <Descriptions.Item label={t('removals.url')}>
          <a href={w.url} target="_blank" rel="noreferrer noopener">{w.url}</a>
        </Descriptions.Item>
        <Descriptions.Item label={t('removals.stateCol')}>
          <RemovalStateTag state={w.state} />
          {w.flagged_at !== null && <Tag color="magenta" icon={<FlagOutlined />}>{t('removals.flagged')}</Tag>}
        </Descriptions.Item>
        <Descriptions.Item label={t('removals.removedAt')}>{dateTime(w.removed_at)}</Descriptions.Item>
        <Descriptions.Item label={t('removals.lastChecked')}>{`${dateTime(w.last_checked_at)} · ${t('removals.checks')} ${w.checks}`}</Descriptions.Item>
      </Descriptions>
      {w.last_error && <Alert style={{ marginTop: 12 }} type="warning" showIcon message={t('removals.lastError', { error: w.last_error })} />}
      <Typography.Title level={5} style={{ marginTop: 24 }}>{t('removals.timeline')}</Typography.Title>
      <Timeline
        data-testid="timeline"
        items={timeline(w).map((it) => {
          if (it.kind === 'notice') {
            return {
              color: 'blue',
              children: (
                <div data-testid="timeline-item" data-kind="notice">
                  <Typography.Text type="secondary">{dateTime(it.at)}</Typography.Text>{' '}
                  <Link to={`/notices?id=${it.id}`}>{t('removals.ev.notice', { ref: it.reference || noticeReference(it.id) })}</Link>{' '}
                  <NoticeStateTag state={it.state as never} />
                  {it.recipient && <Typography.Text type="secondary">{t('removals.ev.noticeTo', { to: it.recipient })}</Typography.Text>}
                </div>
              ),
            };
          }
          if (it.kind === 'flagged') {
            return {
              color: 'magenta',
              children: (
                <div data-testid="timeline-item" data-kind="flagged">
                  <Typography.Text type="secondary">{dateTime(it.at)}</Typography.Text> {t('removals.ev.flagged')}
                </div>
              ),
            };
          }
          return {
            color: it.to === 'removed' ? 'green' : it.to === 'up' ? 'red' : 'orange',
            children: (
              <div data-testid="timeline-item" data-kind="transition" data-to={it.to}>
                <Typography.Text type="secondary">{dateTime(it.at)}</Typography.Text>{' '}
                {it.from === null ? t('removals.ev.first', { to: stateWord(it.to) }) : t('removals.ev.transition', { from: stateWord(it.from), to: stateWord(it.to) })}
                {it.httpStatus !== null && <Tag style={{ marginLeft: 8 }}>HTTP {it.httpStatus}</Tag>}
                <div>
                  <Typography.Text type="secondary" style={{ fontSize: 12 }}>{it.detail}</Typography.Text>
                </div>
              </div>
            ),
          };
        })}
      />
    </div>
  );
}
