import { useCallback, useEffect, useMemo, useState } from 'react';
import { Alert, App, AutoComplete, Button, Card, Descriptions, Drawer, Input, Popconfirm, Select, Space, Table, Tag, Typography } from 'antd';
import type { TableProps } from 'antd';
import { DownloadOutlined, ExportOutlined, FileTextOutlined, PlusOutlined, RedoOutlined, SendOutlined, StopOutlined } from '@ant-design/icons';
import { Link, useSearchParams } from 'react-router-dom';
import { ApiError } from '../api/client';
import { NOTICE_STATES, type ContactSuggestion, type MatchItem, type Notice, type NoticeState } from '../api/types';
import { useApiClient, useAuth } from '../auth';
import { DraftNoticeModal, type DraftInitial } from '../components/DraftNotice';
import { EmptyState, ErrorState, LoadingState, errorMessage } from '../components/States';
import { NoticeStateTag, StatusTag } from '../components/Tags';
import type { Key } from '../i18n/dict';
import { useI18n } from '../i18n/I18nProvider';
import { usePaged } from '../lib/usePaged';
import { saveBlob } from '../lib/download';
import { chapterLabel, dateTime, fileSize } from '../lib/format';
import { defaultRecipient, isEmail, noticeActions, noticeReference, readableFiles } from '../lib/takedown';

export function Notices() {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const state = (NOTICE_STATES as string[]).includes(params.get('state') ?? '') ? (params.get('state') as NoticeState) : undefined;
  const site = params.get('site') ?? '';
  const owner = params.get('owner') ?? '';
  const openId = Number(params.get('id') ?? '') || null;
  const [draft, setDraft] = useState<DraftInitial | null>(params.get('draft') === '1' ? { site: site || undefined, owner: owner || undefined } : null);

  const { items, cursor, loading, error, loadMore, reload } = usePaged(
    (cursor) => api.notices({ state, site: site || undefined, owner: can('holders.pick') ? owner || undefined : undefined, cursor, limit: 100 }),
    [api, state, site, owner],
  );

  const setQuery = (patch: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    next.delete('draft');
    setParams(next, { replace: true });
  };

  const columns: TableProps<Notice>['columns'] = [
    {
      title: t('notices.reference'),
      key: 'ref',
      width: 150,
      render: (_: unknown, n) => (
        <Space size={4}>
          <a onClick={() => setQuery({ id: String(n.id) })} data-testid="notice-link">{noticeReference(n.id)}</a>
          {n.follow_up_of !== null && <Tag color="purple">{t('notices.followUpTag')}</Tag>}
        </Space>
      ),
    },
    ...(can('holders.pick') ? [{ title: t('notices.holder'), dataIndex: 'owner', key: 'owner', width: 140 }] : []),
    { title: t('notices.site'), dataIndex: 'site', key: 'site', width: 160, ellipsis: true },
    { title: t('notices.matches'), key: 'matches', width: 80, render: (_: unknown, n) => n.match_ids.length },
    { title: t('notices.stateCol'), dataIndex: 'state', key: 'state', width: 150, render: (s: NoticeState) => <NoticeStateTag state={s} /> },
    { title: t('notices.recipient'), dataIndex: 'recipient', key: 'recipient', width: 220, ellipsis: true, render: (r: string | null) => r ?? '—' },
    { title: t('notices.created'), dataIndex: 'created_at', key: 'created', width: 140, render: dateTime },
    { title: t('notices.sentAt'), dataIndex: 'sent_at', key: 'sent', width: 140, render: dateTime },
  ];

  return (
    <div data-testid="page-notices">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>{t('notices.title')}</Typography.Title>
        <Button type="primary" icon={<PlusOutlined />} onClick={() => setDraft({ site: site || undefined, owner: owner || undefined })} data-testid="notice-draft-open">
          {t('notices.draft')}
        </Button>
      </Space>
      <Card>
        <Space wrap style={{ marginBottom: 16 }}>
          <Select
            allowClear
            style={{ width: 180 }}
            placeholder={t('notices.filterState')}
            value={state}
            onChange={(v?: string) => setQuery({ state: v })}
            options={NOTICE_STATES.map((s) => ({ value: s, label: t(`notices.state.${s}` as Key) }))}
            data-testid="notice-filter-state"
          />
          <Input.Search
            allowClear
            key={`site-${site}`}
            defaultValue={site}
            placeholder={t('notices.filterSite')}
            style={{ width: 200 }}
            onSearch={(v) => setQuery({ site: v.trim().toLowerCase() || undefined })}
          />
          {can('holders.pick') && (
            <Input.Search allowClear key={`owner-${owner}`} defaultValue={owner} placeholder={t('notices.holder')} style={{ width: 160 }} onSearch={(v) => setQuery({ owner: v.trim() || undefined })} />
          )}
        </Space>
        {error !== undefined && !loading ? (
          <ErrorState error={error} onRetry={() => reload()} />
        ) : (
          <>
            <Table<Notice>
              rowKey="id"
              size="middle"
              loading={loading}
              dataSource={items}
              columns={columns}
              pagination={false}
              scroll={{ x: 1100 }}
              locale={{ emptyText: loading ? ' ' : <EmptyState title={t('notices.empty')} hint={t('notices.emptyHint')} /> }}
              data-testid="notices-table"
            />
            {cursor && (
              <div style={{ textAlign: 'center', marginTop: 16 }}>
                <Button onClick={loadMore} loading={loading}>{t('matches.loadMore')}</Button>
              </div>
            )}
          </>
        )}
      </Card>
      <Drawer
        open={openId !== null}
        width={760}
        onClose={() => setQuery({ id: undefined })}
        title={openId !== null ? t('notice.title', { ref: noticeReference(openId) }) : ''}
        destroyOnClose
      >
        {openId !== null && (
          <NoticeDetail
            key={openId}
            id={openId}
            onChanged={() => reload()}
            onOpen={(id) => {
              setQuery({ id: String(id) });
              reload();
            }}
          />
        )}
      </Drawer>
      <DraftNoticeModal
        open={draft !== null}
        initial={draft ?? {}}
        onClose={() => setDraft(null)}
        onDrafted={(n) => {
          setDraft(null);
          setQuery({ id: String(n.id) });
          reload();
        }}
      />
    </div>
  );
}

/** One notice: its state, files, matches, recipient, and what can be done with it now. */
export function NoticeDetail({ id, onChanged, onOpen }: { id: number; onChanged?: (n: Notice) => void; onOpen?: (id: number) => void }) {
  const { t, lang } = useI18n();
  const api = useApiClient();
  const { session } = useAuth();
  const { message } = App.useApp();
  const [notice, setNotice] = useState<Notice>();
  const [error, setError] = useState<unknown>();
  const [suggestions, setSuggestions] = useState<ContactSuggestion[] | null>(null);
  const [recipient, setRecipient] = useState('');
  const [matches, setMatches] = useState<MatchItem[] | null>(null);
  const [stillUp, setStillUp] = useState(0);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string>();

  const load = useCallback(async () => {
    try {
      const n = await api.notice(id);
      setNotice(n);
      setError(undefined);
      return n;
    } catch (e) {
      setError(e);
      return undefined;
    }
  }, [api, id]);
  useEffect(() => {
    void load();
  }, [load]);

  const site = notice?.site;
  const owner = notice?.owner;
  const pending = notice?.state === 'draft' || notice?.state === 'exported';
  useEffect(() => {
    if (!site || !pending) return;
    let live = true;
    api.siteContacts(site).then(
      (r) => live && setSuggestions(r.items),
      () => live && setSuggestions([]),
    );
    return () => {
      live = false;
    };
  }, [api, site, pending]);
  useEffect(() => {
    if (notice) setRecipient((old) => old || defaultRecipient(notice.recipient, suggestions ?? []));
  }, [notice, suggestions]);
  useEffect(() => {
    if (!site || !owner) return;
    // A notice to a hosting provider names several sites: read the matches of each.
    const hosts = notice?.sites && notice.sites.length ? notice.sites : [site];
    Promise.all(hosts.map((h) => api.matches({ site: h, owner }, null, 500))).then(
      (pages) => setMatches(pages.flatMap((p) => p.items)),
      () => setMatches([]),
    );
  }, [api, site, owner, notice?.sites]);
  const delivered = notice?.state === 'sent' || notice?.state === 'exported';
  useEffect(() => {
    if (!notice || !delivered) return;
    api.removals({ owner: notice.owner, limit: 500 }).then(
      (p) => setStillUp(p.items.filter((w) => notice.page_ids.includes(w.page_id) && w.state !== 'removed').length),
      () => setStillUp(0),
    );
  }, [api, notice, delivered]);

  const named = useMemo(() => (notice && matches ? matches.filter((m) => notice.match_ids.includes(m.id)) : []), [notice, matches]);

  if (error !== undefined && !notice) return <ErrorState error={error} onRetry={() => void load()} />;
  if (!notice) return <LoadingState />;
  const acts = noticeActions(notice, session!.me.role, stillUp);
  const recipientOk = isEmail(recipient);

  /** Run an action; a refusal (e.g. a second send) is shown, never hidden. */
  const act = async (what: string, run: () => Promise<Notice>, done: (n: Notice) => string) => {
    setBusy(what);
    setActionError(undefined);
    try {
      const n = await run();
      setNotice(n);
      message.success(done(n));
      onChanged?.(n);
    } catch (e) {
      // A failed send says what the mail server said (the generic "unavailable" would not).
      const relay = e instanceof ApiError && (e.code === 'unavailable' || e.code === 'conflict');
      const text = what === 'send' ? t('notice.sendFailed', { message: relay ? (e as ApiError).message : errorMessage(t, e) }) : errorMessage(t, e);
      setActionError(text);
      message.error(text);
      await load(); // show the state the server holds now
    } finally {
      setBusy(null);
    }
  };

  const openFile = async (name: string) => {
    try {
      const { blob } = await api.noticeFile(notice.id, name);
      const url = URL.createObjectURL(blob);
      if (!window.open(url, '_blank')) saveBlob(blob, name);
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };
  const downloadFile = async (name: string) => {
    try {
      const { blob, filename } = await api.noticeFile(notice.id, name);
      saveBlob(blob, filename);
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  const exportEml = async () => {
    await act(
      'export',
      () => api.exportNotice(notice.id, recipientOk ? recipient.trim() : undefined),
      () => t('notice.exported', { file: `${noticeReference(notice.id)}-notice.eml` }),
    );
    try {
      const { blob, filename } = await api.noticeFile(notice.id, 'notice.eml');
      saveBlob(blob, filename);
    } catch {
      /* the export failed: already said */
    }
  };

  const followUp = async () => {
    setBusy('followUp');
    setActionError(undefined);
    try {
      const n = await api.draftNotice({ owner: notice.owner, site: notice.site, follow_up_of: notice.id, lang: notice.lang === 'en' ? 'en' : 'zh-CN' });
      message.success(t('notice.followUpCreated', { ref: noticeReference(n.id) }));
      onOpen?.(n.id);
    } catch (e) {
      const text = errorMessage(t, e);
      setActionError(text);
      message.error(text);
    } finally {
      setBusy(null);
    }
  };

  const files = readableFiles(notice.files);
  return (
    <div data-testid="notice-detail" data-notice-id={notice.id} data-state={notice.state}>
      <Descriptions column={1} size="small" bordered>
        <Descriptions.Item label={t('notice.subject')}>{notice.subject}</Descriptions.Item>
        <Descriptions.Item label={t('notice.state')}>
          <NoticeStateTag state={notice.state} />
        </Descriptions.Item>
        <Descriptions.Item label={t('notice.holder')}>{notice.owner}</Descriptions.Item>
        <Descriptions.Item label={t('notice.site')}>{(notice.sites && notice.sites.length ? notice.sites : [notice.site]).join(', ')}</Descriptions.Item>
        <Descriptions.Item label={t('notice.created')}>{`${dateTime(notice.created_at)} · ${notice.created_by}`}</Descriptions.Item>
        {notice.sent_at !== null && (
          <Descriptions.Item label={t('notice.sent')}>
            <span data-testid="notice-sent-at">{`${dateTime(notice.sent_at)} · ${notice.sent_by ?? ''}`}</span>
          </Descriptions.Item>
        )}
        {notice.recipient && <Descriptions.Item label={t('notice.recipient')}><span data-testid="notice-recipient">{notice.recipient}</span></Descriptions.Item>}
        <Descriptions.Item label={t('notice.messageId')}>
          <Typography.Text code copyable data-testid="notice-message-id">{notice.message_id}</Typography.Text>
        </Descriptions.Item>
        {notice.smtp_response && <Descriptions.Item label={t('notice.smtp')}><span data-testid="notice-smtp">{notice.smtp_response}</span></Descriptions.Item>}
        {notice.follow_up_of !== null && (
          <Descriptions.Item label={t('notices.followUpTag')}>
            <a onClick={() => onOpen?.(notice.follow_up_of!)}>{t('notice.followUpOf', { ref: noticeReference(notice.follow_up_of) })}</a>
          </Descriptions.Item>
        )}
      </Descriptions>

      {notice.state === 'sending' && <Alert type="warning" showIcon style={{ marginTop: 16 }} message={t('notice.sendingHint')} data-testid="notice-sending-hint" />}

      {(acts.send || acts.export) && (
        <Card size="small" style={{ marginTop: 16 }} title={t('notice.recipient')}>
          <AutoComplete
            style={{ width: '100%' }}
            value={recipient}
            onChange={(v: string) => setRecipient(v)}
            options={(suggestions ?? []).map((s) => ({
              value: s.address,
              label: (
                <span data-testid="recipient-option">
                  {s.address} <Typography.Text type="secondary">· {t(`notice.source.${s.source.kind}` as Key) ?? s.source.kind}</Typography.Text>
                </span>
              ),
            }))}
          >
            <Input status={recipient && !recipientOk ? 'error' : undefined} data-testid="recipient" />
          </AutoComplete>
          <Typography.Paragraph type="secondary" style={{ marginTop: 8, marginBottom: 0 }}>
            {suggestions !== null && suggestions.length === 0 ? t('notice.noSuggestions') : t('notice.recipientHint')}
          </Typography.Paragraph>
          {suggestions && suggestions.length > 0 && (
            <Space wrap style={{ marginTop: 8 }} data-testid="suggestions">
              {suggestions.map((s) => (
                <Tag key={s.address} color={s.address === recipient.trim() ? 'blue' : undefined} style={{ cursor: 'pointer' }} title={s.reason} onClick={() => setRecipient(s.address)} data-testid="suggestion">
                  {s.address}
                </Tag>
              ))}
            </Space>
          )}
        </Card>
      )}

      <Space wrap style={{ marginTop: 16 }}>
        {acts.send && (
          <Popconfirm title={t('notice.sendConfirm', { to: recipient.trim() })} onConfirm={() => act('send', () => api.sendNotice(notice.id, recipient.trim()), (n) => t('notice.sentOk', { to: n.recipient ?? recipient }))} okButtonProps={{ 'data-testid': 'notice-send-ok' }} disabled={!recipientOk || busy !== null}>
            <Button type="primary" icon={<SendOutlined />} disabled={!recipientOk || busy !== null} loading={busy === 'send'} data-testid="notice-send">
              {t('notice.send')}
            </Button>
          </Popconfirm>
        )}
        {acts.export && (
          <Button icon={<ExportOutlined />} disabled={busy !== null} loading={busy === 'export'} onClick={() => void exportEml()} data-testid="notice-export">
            {t('notice.export')}
          </Button>
        )}
        {acts.cancel && (
          <Popconfirm title={t('notice.cancelConfirm')} onConfirm={() => act('cancel', () => api.cancelNotice(notice.id), () => t('notice.cancelled'))} disabled={busy !== null}>
            <Button danger icon={<StopOutlined />} disabled={busy !== null} loading={busy === 'cancel'} data-testid="notice-cancel">
              {t('notice.cancel')}
            </Button>
          </Popconfirm>
        )}
        {acts.resolve && (
          <>
            <Button onClick={() => act('resolve', () => api.resolveNotice(notice.id, true), () => t('notice.resolved'))} loading={busy === 'resolve'} disabled={busy !== null} data-testid="notice-resolve-delivered">
              {t('notice.resolveDelivered')}
            </Button>
            <Button onClick={() => act('resolve', () => api.resolveNotice(notice.id, false), () => t('notice.resolved'))} disabled={busy !== null} data-testid="notice-resolve-failed">
              {t('notice.resolveNotDelivered')}
            </Button>
          </>
        )}
      </Space>
      {actionError && <Alert type="error" showIcon style={{ marginTop: 12 }} message={actionError} data-testid="notice-error" />}

      {delivered && stillUp > 0 && (
        <Alert
          style={{ marginTop: 16 }}
          type="warning"
          showIcon
          message={t('notice.stillUp', { n: stillUp })}
          data-testid="notice-still-up"
          action={
            acts.followUp && (
              <Button size="small" icon={<RedoOutlined />} loading={busy === 'followUp'} onClick={() => void followUp()} data-testid="notice-follow-up">
                {t('notice.followUp')}
              </Button>
            )
          }
        />
      )}

      <Typography.Title level={5} style={{ marginTop: 24 }}>{t('notice.files')}</Typography.Title>
      <Table
        rowKey="name"
        size="small"
        pagination={false}
        dataSource={files}
        data-testid="notice-files"
        columns={[
          { title: t('holders.docName'), dataIndex: 'name', key: 'name', render: (n: string) => <span data-testid="notice-file-name">{n}</span> },
          { title: t('holders.docSize'), dataIndex: 'size', key: 'size', width: 90, render: (n: number) => fileSize(n) },
          {
            title: '',
            key: 'actions',
            width: 170,
            render: (_: unknown, f: { name: string }) => (
              <Space size="small">
                {(f.name === 'notice.pdf' || f.name === 'notice.html') && (
                  <Button size="small" type="link" icon={<FileTextOutlined />} onClick={() => void openFile(f.name)} data-testid={`open-${f.name}`}>
                    {t('notice.open')}
                  </Button>
                )}
                <Button size="small" type="link" icon={<DownloadOutlined />} onClick={() => void downloadFile(f.name)}>
                  {t('notice.download')}
                </Button>
              </Space>
            ),
          },
        ]}
      />

      <Typography.Title level={5} style={{ marginTop: 24 }}>{t('notice.matches', { n: notice.match_ids.length })}</Typography.Title>
      <Table<MatchItem>
        rowKey="id"
        size="small"
        pagination={false}
        loading={matches === null}
        dataSource={named}
        data-testid="notice-matches"
        columns={[
          { title: t('matches.work'), dataIndex: 'work_title', key: 'work', ellipsis: true, render: (v: string, m) => <Link to={`/matches/${m.id}`}>{v}</Link> },
          { title: t('matches.chapter'), key: 'chapter', width: 80, render: (_: unknown, m) => chapterLabel(lang, m.section_ordinal) },
          { title: t('matches.url'), dataIndex: 'url', key: 'url', ellipsis: true, render: (u: string) => <a href={u} target="_blank" rel="noreferrer noopener">{u}</a> },
          { title: t('matches.status'), dataIndex: 'status', key: 'status', width: 120, render: (s: MatchItem['status']) => <StatusTag status={s} /> },
        ]}
      />
    </div>
  );
}
