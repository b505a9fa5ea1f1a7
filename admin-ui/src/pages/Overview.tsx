import { Badge, Button, Card, Col, Row, Statistic, Table, Tag, Typography } from 'antd';
import { useCallback, useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import type { EChartsOption } from 'echarts';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { useLoad } from '../lib/useLoad';
import { EmptyState, Loadable } from '../components/States';
import { Chart } from '../components/Chart';
import { count, dateTime, fillDays } from '../lib/format';
import { LIVE_EMPTY, liveUpdate, usePolling, type LiveState } from '../lib/live';
import { KindTag, ScoreBar } from '../components/Tags';
import { MATCH_KINDS, type MatchItem, type Stats } from '../api/types';
import type { Key } from '../i18n/dict';

export function Overview() {
  const { t } = useI18n();
  const api = useApiClient();
  const state = useLoad(() => api.stats({ top: 10 }), [api]);
  return (
    <div data-testid="page-overview">
      <Typography.Title level={3}>{t('overview.title')}</Typography.Title>
      <Loadable state={state}>{(s) => <OverviewBody stats={s} />}</Loadable>
      <LiveMatches />
    </div>
  );
}

/** How often the live panel asks for new matches. */
export const LIVE_POLL_MS = 10_000;
/** Matches the live panel shows. */
const LIVE_LIMIT = 20;

/**
 * The newest matches, asked for again every {@link LIVE_POLL_MS} while the tab is visible:
 * those found since the page opened (by any process: the list is the store's) are marked.
 */
export function LiveMatches({ pollMs = LIVE_POLL_MS }: { pollMs?: number }) {
  const { t } = useI18n();
  const api = useApiClient();
  const [live, setLive] = useState<LiveState>(LIVE_EMPTY);
  const [failed, setFailed] = useState(false);
  const poll = useCallback(() => {
    api.matches({ sort: '-id' }, null, LIVE_LIMIT).then(
      (page) => {
        setFailed(false);
        setLive((s) => liveUpdate(s, page.items, LIVE_LIMIT));
      },
      // A failed poll keeps what is shown; the next one tries again.
      () => setFailed(true),
    );
  }, [api]);
  useEffect(() => poll(), [poll]);
  usePolling(poll, pollMs);
  const fresh = new Set(live.fresh);
  const freshCount = `${count(live.fresh.length)}${live.more ? '+' : ''}`;
  return (
    <Card
      style={{ marginTop: 16 }}
      data-testid="live-matches"
      title={
        <span>
          <Badge status={failed ? 'error' : 'processing'} /> {t('live.title')}
        </span>
      }
      extra={
        <Typography.Text type="secondary" data-testid="live-fresh">
          {failed ? t('live.failed') : t('live.fresh', { n: freshCount, s: Math.round(pollMs / 1000) })}
        </Typography.Text>
      }
    >
      <Table<MatchItem>
        size="small"
        rowKey="id"
        pagination={false}
        loading={live.baseline === null && !failed}
        data-testid="live-table"
        dataSource={live.items}
        locale={{ emptyText: t('overview.noMatches') }}
        rowClassName={(m) => (fresh.has(m.id) ? 'live-fresh' : '')}
        columns={[
          {
            title: t('matches.firstSeen'),
            dataIndex: 'first_seen',
            key: 'first_seen',
            width: 170,
            render: (v: number, m) => (
              <span>
                {dateTime(v)} {fresh.has(m.id) && <Tag color="red" data-testid="live-new">{t('live.new')}</Tag>}
              </span>
            ),
          },
          { title: t('matches.work'), dataIndex: 'work_title', key: 'work', ellipsis: true, render: (v: string, m) => <Link to={`/matches/${m.id}`}>{v}</Link> },
          { title: t('matches.site'), dataIndex: 'site', key: 'site', width: 160, ellipsis: true },
          { title: t('matches.kind'), dataIndex: 'kind', key: 'kind', width: 110, render: (k: string) => <KindTag kind={k} /> },
          { title: t('matches.score'), dataIndex: 'score', key: 'score', width: 140, render: (v: number) => <ScoreBar score={v} /> },
        ]}
      />
    </Card>
  );
}

export function OverviewBody({ stats }: { stats: Stats }) {
  const { t } = useI18n();
  const { can } = useAuth();
  const navigate = useNavigate();

  if (stats.totals.works === 0) {
    return (
      <Card>
        <EmptyState
          title={t('overview.noWorks')}
          hint={t('overview.noWorksHint')}
          action={can('works.write') ? <Button type="primary" onClick={() => navigate('/works?upload=1')}>{t('overview.goUpload')}</Button> : undefined}
        />
      </Card>
    );
  }

  const days = fillDays(stats.from, stats.to, stats.by_day);
  const trend: EChartsOption = {
    tooltip: { trigger: 'axis' },
    grid: { left: 40, right: 16, top: 16, bottom: 28 },
    xAxis: { type: 'category', data: days.map((d) => d.day.slice(5)) },
    yAxis: { type: 'value', minInterval: 1 },
    series: [{ type: 'line', name: t('overview.count'), smooth: false, areaStyle: { opacity: 0.15 }, data: days.map((d) => d.count), color: '#b8322a' }],
  };
  const sites = stats.top_sites.slice(0, 10).reverse();
  const sitesChart: EChartsOption = {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    xAxis: { type: 'value', minInterval: 1 },
    yAxis: { type: 'category', data: sites.map((s) => s.site) },
    series: [{ type: 'bar', name: t('overview.count'), data: sites.map((s) => s.count), color: '#fa8c16' }],
  };
  const unit = t('overview.matchesUnit');

  return (
    <>
      <Row gutter={[16, 16]}>
        <Col xs={12} lg={6}>
          <Card><Statistic title={t('overview.newToday')} value={stats.new_today} suffix={unit} data-testid="stat-new-today" /></Card>
        </Col>
        <Col xs={12} lg={6}>
          <Card><Statistic title={t('overview.newWeek')} value={stats.new_this_week} suffix={unit} data-testid="stat-new-week" /></Card>
        </Col>
        <Col xs={12} lg={6}>
          <Card><Statistic title={t('overview.confirmed')} value={stats.by_status.confirmed ?? 0} suffix={unit} valueStyle={{ color: '#cf1322' }} /></Card>
        </Col>
        <Col xs={12} lg={6}>
          <Card><Statistic title={t('overview.takedown')} value={stats.by_status.takedown_sent ?? 0} suffix={unit} valueStyle={{ color: '#389e0d' }} /></Card>
        </Col>
      </Row>
      <Typography.Paragraph type="secondary" style={{ marginTop: 12 }} data-testid="totals">
        {stats.totals.pages === null || stats.totals.pages === undefined
          ? t('overview.totalsHolder', { works: count(stats.totals.works), matches: count(stats.totals.matches_all_time) })
          : t('overview.totals', { works: count(stats.totals.works), pages: count(stats.totals.pages), matches: count(stats.totals.matches_all_time) })}
      </Typography.Paragraph>
      {stats.by_kind && stats.total > 0 && (
        <Typography.Paragraph type="secondary" data-testid="kinds">
          {t('overview.byKind')}
          {MATCH_KINDS.map((k) => (
            <Link key={k} to={`/matches?kind=${k}`} style={{ marginRight: 12 }} data-testid={`kind-count-${k}`}>
              {t(`kind.${k}` as Key)} {count(stats.by_kind?.[k] ?? 0)}
            </Link>
          ))}
        </Typography.Paragraph>
      )}
      <Card title={t('overview.trend')} style={{ marginTop: 4 }}>
        {stats.total === 0 ? (
          <EmptyState title={t('overview.noMatches')} hint={t('overview.noMatchesHint')} />
        ) : (
          <Chart option={trend} testId="trend-chart" />
        )}
      </Card>
      <Row gutter={[16, 16]} style={{ marginTop: 16 }}>
        <Col xs={24} lg={12}>
          <Card title={t('overview.topSites')}>
            {sites.length === 0 ? (
              <EmptyState title={t('overview.noMatches')} />
            ) : (
              <>
                <Chart option={sitesChart} height={Math.max(160, sites.length * 32)} testId="sites-chart" />
                <div style={{ marginTop: 8 }}>
                  {stats.top_sites.slice(0, 10).map((s) => (
                    <Link key={s.site} to={`/matches?site=${encodeURIComponent(s.site)}`} style={{ marginRight: 12 }}>
                      {s.site}
                    </Link>
                  ))}
                </div>
              </>
            )}
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('overview.topWorks')}>
            <Table
              size="small"
              rowKey="work_id"
              pagination={false}
              dataSource={stats.top_works}
              locale={{ emptyText: t('overview.noMatches') }}
              data-testid="top-works"
              columns={[
                { title: t('overview.work'), dataIndex: 'title', render: (title: string, r) => <Link to={`/works/${r.work_id}`}>{title}</Link> },
                { title: t('works.owner'), dataIndex: 'owner' },
                { title: t('overview.count'), dataIndex: 'count', align: 'right', render: (c: number, r) => <Link to={`/matches?work_id=${r.work_id}`}>{count(c)}</Link> },
              ]}
            />
          </Card>
        </Col>
      </Row>
    </>
  );
}
