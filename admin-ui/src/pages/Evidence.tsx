import { useState } from 'react';
import { Alert, App, Button, Card, Col, Descriptions, Input, Row, Space, Tabs, Timeline, Typography } from 'antd';
import { ArrowLeftOutlined, CheckOutlined, CloseOutlined, ExportOutlined, SendOutlined, UndoOutlined } from '@ant-design/icons';
import { Link, useParams } from 'react-router-dom';
import { useApiClient } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import type { Key } from '../i18n/dict';
import { useLoad } from '../lib/useLoad';
import { EmptyState, Loadable, errorMessage } from '../components/States';
import { KindTag, ScoreBar, StatusTag } from '../components/Tags';
import { MarkedText } from '../components/Passage';
import { chapterLabel, count, dateTime, explainMatch, percent } from '../lib/format';
import { passageSegments, segmentsByRanges } from '../lib/highlight';
import type { MatchDetail, ReviewStatus } from '../api/types';
import { EvidenceCaptures } from './EvidenceCaptures';

export function Evidence() {
  const { id } = useParams();
  const api = useApiClient();
  const { t } = useI18n();
  const state = useLoad(() => api.match(Number(id)), [api, id]);
  return (
    <div data-testid="page-evidence">
      <Link to="/matches"><ArrowLeftOutlined /> {t('evidence.back')}</Link>
      <Loadable state={state}>{(d) => <EvidenceBody initial={d} />}</Loadable>
    </div>
  );
}

function EvidenceBody({ initial }: { initial: MatchDetail }) {
  const { t, lang } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [detail, setDetail] = useState(initial);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState<ReviewStatus | null>(null);
  const m = detail.match;
  const chapter = `${chapterLabel(lang, m.section_ordinal)}${m.section_title ? ` ${m.section_title}` : ''}`;
  // Why the verdict was reached, in the dashboard's language (older servers send none).
  const reasons = detail.explanation.reasons?.[lang === 'en' ? 'en' : 'zh'] ?? [];

  const review = async (status: ReviewStatus) => {
    setBusy(status);
    try {
      const d = await api.review(m.id, status, note.trim() || undefined);
      setDetail(d);
      setNote('');
      message.success(t('evidence.updated', { status: t(`status.${status}` as Key) }));
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setBusy(null);
    }
  };

  const s = detail.scores;
  const measure = (label: Key, v: number | undefined) => (
    <Descriptions.Item label={t(label)}>{v === undefined ? '—' : percent(v)}</Descriptions.Item>
  );

  return (
    <>
      <Space style={{ width: '100%', justifyContent: 'space-between', margin: '12px 0' }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>
          {t('evidence.title')} · {m.work_title}
        </Typography.Title>
        <a href={m.url} target="_blank" rel="noreferrer noopener" data-testid="open-page">
          <ExportOutlined /> {t('evidence.openPage')}
        </a>
      </Space>
      <Alert
        type="warning"
        showIcon
        message={<span data-testid="explanation">{explainMatch(lang, m, detail.explanation)}</span>}
        description={
          reasons.length > 0 ? (
            <ul data-testid="reasons" style={{ margin: 0, paddingLeft: 20 }}>
              {reasons.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ul>
          ) : undefined
        }
        style={{ marginBottom: 16 }}
      />
      <Row gutter={16}>
        <Col xs={24} lg={16}>
          <Card size="small">
            <Descriptions column={{ xs: 1, md: 2 }} size="small">
              <Descriptions.Item label={t('matches.work')}><Link to={`/works/${m.work_id}`}>{m.work_title}</Link></Descriptions.Item>
              <Descriptions.Item label={t('matches.chapter')}>{chapter}</Descriptions.Item>
              <Descriptions.Item label={t('matches.url')} span={2}>
                <a href={m.url} target="_blank" rel="noreferrer noopener">{m.url}</a>
              </Descriptions.Item>
              <Descriptions.Item label={t('matches.kind')}><KindTag kind={m.kind} /></Descriptions.Item>
              {m.verdict_kind && (
                <Descriptions.Item label={t('matches.verdict')}>
                  <span data-testid="verdict-kind">{t(`verdict.${m.verdict_kind}` as Key)}</span>
                </Descriptions.Item>
              )}
              <Descriptions.Item label={t('matches.score')}><ScoreBar score={m.score} /></Descriptions.Item>
              <Descriptions.Item label={t('evidence.copiedChars')}>{t('evidence.chars', { n: count(m.copied_chars) })}</Descriptions.Item>
              <Descriptions.Item label={t('evidence.coverage')}>{percent(m.coverage)}</Descriptions.Item>
              <Descriptions.Item label={t('matches.firstSeen')}>{dateTime(m.first_seen)}</Descriptions.Item>
              <Descriptions.Item label={t('matches.lastSeen')}>{dateTime(m.last_seen)}</Descriptions.Item>
            </Descriptions>
          </Card>
        </Col>
        <Col xs={24} lg={8}>
          <Card size="small" title={<Space>{t('matches.status')}<StatusTag status={m.status} /></Space>} data-testid="review-card">
            <Input.TextArea rows={2} value={note} onChange={(e) => setNote(e.target.value)} placeholder={t('evidence.note')} style={{ marginBottom: 8 }} />
            <Space wrap>
              <Button danger type="primary" icon={<CheckOutlined />} loading={busy === 'confirmed'} disabled={m.status === 'confirmed'} onClick={() => review('confirmed')} data-testid="review-confirm">
                {t('evidence.confirm')}
              </Button>
              <Button icon={<CloseOutlined />} loading={busy === 'dismissed'} disabled={m.status === 'dismissed'} onClick={() => review('dismissed')} data-testid="review-dismiss">
                {t('evidence.dismiss')}
              </Button>
              <Button icon={<SendOutlined />} loading={busy === 'takedown_sent'} disabled={m.status === 'takedown_sent'} onClick={() => review('takedown_sent')} data-testid="review-takedown">
                {t('evidence.takedown')}
              </Button>
              {m.status !== 'new' && (
                <Button type="link" icon={<UndoOutlined />} loading={busy === 'new'} onClick={() => review('new')}>
                  {t('evidence.reset')}
                </Button>
              )}
            </Space>
          </Card>
        </Col>
      </Row>
      <EvidenceCaptures matchId={m.id} />
      <Tabs
        style={{ marginTop: 8 }}
        items={[
          { key: 'passages', label: t('evidence.passages'), children: <Passages detail={detail} chapter={chapter} /> },
          { key: 'whole', label: t('evidence.wholeChapter'), children: <WholeChapter detail={detail} chapter={chapter} /> },
          {
            key: 'scores',
            label: t('evidence.scores'),
            children: (
              <Card size="small">
                <Descriptions column={1} size="small">
                  {measure('evidence.containment', s.containment_ab)}
                  {measure('evidence.resemblance', s.resemblance)}
                  {measure('evidence.dna', s.dna_score)}
                  {measure('evidence.winnow', s.winnow_containment_ab)}
                  <Descriptions.Item label={t('evidence.simhash')}>{s.simhash_distance ?? '—'}</Descriptions.Item>
                </Descriptions>
              </Card>
            ),
          },
          {
            key: 'trail',
            label: t('evidence.trail'),
            children: (
              <Card size="small" data-testid="review-trail">
                {detail.review_log.length === 0 ? (
                  <Typography.Text type="secondary">{t('evidence.noTrail')}</Typography.Text>
                ) : (
                  <Timeline
                    items={detail.review_log.map((e) => ({
                      children: (
                        <span>
                          {dateTime(e.at)} · {e.by}: {t(`status.${e.from}` as Key)} → {t(`status.${e.to}` as Key)}
                          {e.note ? ` · ${e.note}` : ''}
                        </span>
                      ),
                    }))}
                  />
                )}
              </Card>
            ),
          },
        ]}
      />
    </>
  );
}

function Passages({ detail, chapter }: { detail: MatchDetail; chapter: string }) {
  const { t } = useI18n();
  const m = detail.match;
  if (detail.passages.length === 0) return <EmptyState title={t('evidence.noPassages')} />;
  return (
    <Space direction="vertical" style={{ width: '100%' }} data-testid="passages">
      {detail.passages.map((p, i) => (
        <Card key={i} size="small" title={t('evidence.passage', { n: i + 1, chars: count(p.chars) })}>
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Typography.Text type="secondary">{t('evidence.workSide', { work: m.work_title, chapter })}</Typography.Text>
              <MarkedText segments={passageSegments(p.work)} testId="passage-work" contextDim />
            </Col>
            <Col xs={24} md={12}>
              <Typography.Text type="secondary">{t('evidence.pageSide', { site: m.site })}</Typography.Text>
              <MarkedText segments={passageSegments(p.page.visible ?? p.page)} testId="passage-page" contextDim />
            </Col>
          </Row>
        </Card>
      ))}
    </Space>
  );
}

function WholeChapter({ detail, chapter }: { detail: MatchDetail; chapter: string }) {
  const { t } = useI18n();
  const api = useApiClient();
  const m = detail.match;
  const section = useLoad(() => api.section(m.work_id, m.section_id), [api, m.work_id, m.section_id]);
  return (
    <Card size="small" title={t('evidence.workSide', { work: m.work_title, chapter })}>
      <Typography.Paragraph type="secondary">{t('evidence.wholeHint')}</Typography.Paragraph>
      <Loadable state={section}>
        {(sec) => (
          <div style={{ maxHeight: 640, overflow: 'auto' }}>
            <MarkedText segments={segmentsByRanges(sec.text, detail.passages.map((p) => [p.work.start, p.work.end]))} testId="whole-work" />
          </div>
        )}
      </Loadable>
    </Card>
  );
}
