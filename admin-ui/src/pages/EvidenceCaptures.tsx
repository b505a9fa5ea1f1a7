import { useEffect, useRef, useState } from 'react';
import { Alert, App, Button, Card, Col, Descriptions, List, Row, Space, Spin, Tag, Typography } from 'antd';
import { CameraOutlined, CheckCircleOutlined, CloseCircleOutlined, DownloadOutlined, ReloadOutlined } from '@ant-design/icons';
import { useApiClient } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import type { Key } from '../i18n/dict';
import { useLoad } from '../lib/useLoad';
import { saveBlob } from '../lib/download';
import { dateTime, fileSize, shortHash } from '../lib/format';
import { EmptyState, ErrorState, errorMessage } from '../components/States';
import { ApiError } from '../api/client';
import type { Capture, CaptureList } from '../api/types';

const SCREENSHOT = 'capture/screenshot.png';

/** Newest first (by capture time, then by id). */
export function newestFirst(items: Capture[]): Capture[] {
  return items.slice().sort((a, b) => Date.parse(b.captured_at) - Date.parse(a.captured_at) || b.id - a.id);
}

/** A server without captures answers 501: a quiet note, not an error page. */
function notEnabled(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 501 || e.code === 'not_implemented');
}

/**
 * The evidence captures of a match: the list (newest first), the selected capture's
 * screenshot and verification, its package, and a capture on demand.
 * `pollMs`/`pollFor`: how often and how long to ask for a new capture after one was requested.
 */
export function EvidenceCaptures({ matchId, pollMs = 2000, pollFor = 60_000 }: { matchId: number; pollMs?: number; pollFor?: number }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const loaded = useLoad(() => api.captures(matchId), [api, matchId]);
  const [fresh, setFresh] = useState<CaptureList | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [pending, setPending] = useState(false);
  const [downloading, setDownloading] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const alive = useRef(true);
  const autoPolled = useRef(false);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      clearTimeout(timer.current);
    };
  }, []);

  const list = fresh ?? loaded.data;
  const items = list ? newestFirst(list.items) : [];
  const current = items.find((c) => c.id === selected) ?? items[0];

  /** Ask for the list every `pollMs` until a capture not in `known` appears, or time is up. */
  const poll = (known: Set<number>, deadline: number, quiet: boolean) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(async () => {
      try {
        const l = await api.captures(matchId);
        if (!alive.current) return;
        setFresh(l);
        const added = newestFirst(l.items).find((c) => !known.has(c.id));
        if (added) {
          setSelected(added.id);
          setPending(false);
          if (!quiet) message.success(t('capture.done'));
          return;
        }
        if (quiet && !l.first_capture_pending) return;
      } catch {
        /* keep asking until the deadline */
      }
      if (!alive.current) return;
      if (Date.now() >= deadline) {
        setPending(false);
        if (!quiet) message.warning(t('capture.timeout'));
        return;
      }
      poll(known, deadline, quiet);
    }, pollMs);
  };

  // The automatic capture of a new match is queued: show it as soon as it is made.
  useEffect(() => {
    if (autoPolled.current || !loaded.data) return;
    if (loaded.data.first_capture_pending && loaded.data.items.length === 0) {
      autoPolled.current = true;
      poll(new Set(), Date.now() + pollFor, true);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loaded.data]);

  const again = async () => {
    const known = new Set(items.map((c) => c.id));
    setPending(true);
    try {
      await api.requestCapture(matchId);
    } catch (e) {
      setPending(false);
      message.error(errorMessage(t, e));
      return;
    }
    message.info(t('capture.requested'));
    poll(known, Date.now() + pollFor, false);
  };

  const download = async () => {
    if (!current) return;
    setDownloading(true);
    try {
      const { blob, filename } = await api.evidencePackage(matchId, current.id);
      saveBlob(blob, filename);
      message.success(t('capture.downloaded', { file: filename }));
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setDownloading(false);
    }
  };

  const title = (
    <Space>
      <CameraOutlined />
      {t('capture.title')}
    </Space>
  );

  if (loaded.error && !list) {
    if (notEnabled(loaded.error)) {
      return (
        <Card size="small" title={title} style={{ marginTop: 16 }} data-testid="captures">
          <Typography.Text type="secondary" data-testid="captures-disabled">
            {t('capture.disabled')}
          </Typography.Text>
        </Card>
      );
    }
    return (
      <Card size="small" title={title} style={{ marginTop: 16 }} data-testid="captures">
        <ErrorState error={loaded.error} onRetry={loaded.reload} />
      </Card>
    );
  }
  if (!list) {
    return (
      <Card size="small" title={title} style={{ marginTop: 16 }} data-testid="captures">
        <div style={{ textAlign: 'center', padding: 16 }} data-testid="loading">
          <Spin />
        </div>
      </Card>
    );
  }

  const actions = (
    <Space wrap>
      <Button icon={<DownloadOutlined />} disabled={!current} loading={downloading} onClick={download} data-testid="download-package">
        {t('capture.download')}
      </Button>
      <Button icon={<ReloadOutlined />} loading={pending} onClick={again} data-testid="capture-again">
        {t('capture.again')}
      </Button>
    </Space>
  );

  return (
    <Card size="small" title={title} extra={actions} style={{ marginTop: 16 }} data-testid="captures">
      <Typography.Paragraph type="secondary">{t('capture.intro')}</Typography.Paragraph>
      {pending && (
        <Alert type="info" showIcon icon={<Spin size="small" />} message={t('capture.pending')} style={{ marginBottom: 12 }} data-testid="capture-pending" />
      )}
      {items.length === 0 ? (
        list.first_capture_pending ? (
          <div data-testid="captures-queued">
            <EmptyState title={t('capture.queued')} hint={t('capture.queuedHint')} />
          </div>
        ) : (
          <div data-testid="captures-empty">
            <EmptyState title={t('capture.none')} hint={t('capture.noneHint')} />
          </div>
        )
      ) : (
        current && (
          <Row gutter={16}>
            <Col xs={24} lg={10}>
              <Screenshot matchId={matchId} capture={current} />
            </Col>
            <Col xs={24} lg={14}>
              <VerificationView matchId={matchId} captureId={current.id} />
              <List
                size="small"
                bordered
                style={{ marginTop: 12 }}
                dataSource={items}
                data-testid="capture-list"
                renderItem={(c) => (
                  <CaptureItem capture={c} selected={c.id === current.id} onSelect={() => setSelected(c.id)} />
                )}
              />
            </Col>
          </Row>
        )
      )}
      {list.public_key && (
        <div style={{ marginTop: 12 }} data-testid="public-key-line">
          <Typography.Text type="secondary">{t('capture.publicKey')}</Typography.Text>
          <Typography.Text code copyable={{ text: list.public_key }} data-testid="public-key" style={{ wordBreak: 'break-all' }}>
            {list.public_key}
          </Typography.Text>
          <div>
            <Typography.Text type="secondary" data-testid="verify-hint" style={{ wordBreak: 'break-all' }}>
              {t('capture.verifyHint', { key: list.public_key })}
            </Typography.Text>
          </div>
        </div>
      )}
    </Card>
  );
}

function CaptureItem({ capture: c, selected, onSelect }: { capture: Capture; selected: boolean; onSelect: () => void }) {
  const { t } = useI18n();
  const r = c.record ?? {};
  const source = typeof r.source === 'string' ? r.source : null;
  const notes = Array.isArray(r.notes) ? r.notes : [];
  const known = (prefix: string, v: string) => {
    const key = `${prefix}.${v}` as Key;
    const s = t(key);
    return s === key ? v : s;
  };
  return (
    <List.Item
      onClick={onSelect}
      style={{ cursor: 'pointer', background: selected ? '#fff7f0' : undefined, display: 'block' }}
      data-testid="capture-item"
      data-capture-id={c.id}
      data-selected={selected ? 'true' : 'false'}
    >
      <Space wrap size={4}>
        <Typography.Text strong data-testid="capture-time">{dateTime(Date.parse(c.captured_at))}</Typography.Text>
        <Tag data-testid="capture-reason">{known('capture.reason', c.reason)}</Tag>
        {source && (
          <Tag color={source === 'fetched' ? 'green' : 'default'} data-testid="capture-source">
            {known('capture.source', source)}
          </Tag>
        )}
        <Typography.Text type="secondary">{t('capture.leaf', { n: c.leaf_index })}</Typography.Text>
        {c.pruned_at && <Tag color="orange">{t('capture.pruned')}</Tag>}
        {selected && <Tag color="red">{t('capture.selected')}</Tag>}
      </Space>
      <Descriptions size="small" column={1} style={{ marginTop: 4 }}>
        {r.final_url && (
          <Descriptions.Item label={t('capture.finalUrl')}>
            <span style={{ wordBreak: 'break-all' }} data-testid="capture-final-url">{String(r.final_url)}</span>
          </Descriptions.Item>
        )}
        {r.remote_ip && <Descriptions.Item label={t('capture.ip')}>{String(r.remote_ip)}</Descriptions.Item>}
        {notes.length > 0 && (
          <Descriptions.Item label={t('capture.notes')}>
            <div data-testid="capture-notes">
              {notes.map((n, i) => (
                <div key={i}>{String(n)}</div>
              ))}
            </div>
          </Descriptions.Item>
        )}
        <Descriptions.Item label={t('capture.files')}>
          <div data-testid="capture-files">
            {c.files.map((f) => (
              <div key={f.name}>
                {f.name} · {fileSize(f.size)} ·{' '}
                <Typography.Text code title={f.sha256}>
                  {shortHash(f.sha256)}
                </Typography.Text>
              </div>
            ))}
          </div>
        </Descriptions.Item>
      </Descriptions>
    </List.Item>
  );
}

/** The capture's screenshot, fetched with the key as a blob (no plain link: the API needs the key). */
function Screenshot({ matchId, capture }: { matchId: number; capture: Capture }) {
  const { t } = useI18n();
  const api = useApiClient();
  const has = !capture.pruned_at && capture.files.some((f) => f.name === SCREENSHOT);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setUrl(null);
    setError(null);
    if (!has) return;
    let live = true;
    let made: string | null = null;
    api.captureFile(matchId, capture.id, SCREENSHOT).then(
      (blob) => {
        if (!live) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [api, matchId, capture.id, has]);

  if (!has) {
    return (
      <Typography.Paragraph type="secondary" data-testid="no-screenshot">
        {t('capture.noScreenshot')}
      </Typography.Paragraph>
    );
  }
  if (error) return <Alert type="warning" showIcon message={errorMessage(t, error)} />;
  if (!url) {
    return (
      <div style={{ textAlign: 'center', padding: 24 }}>
        <Spin />
      </div>
    );
  }
  return (
    <div>
      <Typography.Text type="secondary">
        {t('capture.screenshot')} · {t('capture.screenshotHint')}
      </Typography.Text>
      <a href={url} target="_blank" rel="noreferrer noopener" data-testid="screenshot-link">
        <div style={{ maxHeight: 560, overflow: 'auto', border: '1px solid #f0f0f0', marginTop: 4 }}>
          <img src={url} alt={t('capture.screenshot')} style={{ width: '100%', display: 'block' }} data-testid="capture-screenshot" />
        </div>
      </a>
    </div>
  );
}

function VerificationView({ matchId, captureId }: { matchId: number; captureId: number }) {
  const { t } = useI18n();
  const api = useApiClient();
  const v = useLoad(() => api.verification(matchId, captureId), [api, matchId, captureId]);
  if (v.error && !v.loading) return <Alert type="warning" showIcon message={errorMessage(t, v.error)} data-testid="verification-error" />;
  if (!v.data || v.data.capture_id !== captureId) {
    return (
      <Space>
        <Spin size="small" />
        <Typography.Text type="secondary">{t('capture.verifying')}</Typography.Text>
      </Space>
    );
  }
  const d = v.data;
  const failed = d.checks.filter((c) => !c.ok);
  return (
    <Alert
      type={d.ok ? 'success' : 'error'}
      showIcon
      data-testid="verification"
      data-ok={d.ok ? 'true' : 'false'}
      message={
        <span data-testid="verification-title">
          {d.ok ? t('capture.verified') : t('capture.notVerified')}
          {' · '}
          {t('capture.verifiedHint', { size: fileSize(d.package_bytes), n: d.tree_size })}
        </span>
      }
      description={
        <div>
          {!d.ok && (
            <Typography.Paragraph type="danger" style={{ marginBottom: 4 }} data-testid="verification-summary">
              {d.summary}
            </Typography.Paragraph>
          )}
          <ul style={{ margin: 0, paddingLeft: 20 }} data-testid="verification-checks">
            {(d.ok ? d.checks : failed.concat(d.checks.filter((c) => c.ok))).map((c, i) => (
              <li key={i} data-ok={c.ok ? 'true' : 'false'}>
                {c.ok ? <CheckCircleOutlined style={{ color: '#52c41a' }} /> : <CloseCircleOutlined style={{ color: '#cf1322' }} />} {c.what}
                {c.detail ? ` · ${c.detail}` : ''}
              </li>
            ))}
          </ul>
        </div>
      }
    />
  );
}
