import { useCallback, useEffect, useState } from 'react';
import { Alert, App, Button, Card, Col, Form, Input, InputNumber, Popconfirm, Row, Select, Space, Table, Typography, Upload } from 'antd';
import { DeleteOutlined, DownloadOutlined, PlusOutlined, SaveOutlined, UploadOutlined } from '@ant-design/icons';
import { Navigate, useNavigate, useParams } from 'react-router-dom';
import { ApiError } from '../api/client';
import type { AlertSettings, Holder, HolderDocument, HolderProfile, WorkItem } from '../api/types';
import { useApiClient, useAuth } from '../auth';
import { EmptyState, ErrorState, LoadingState, errorMessage } from '../components/States';
import { useI18n } from '../i18n/I18nProvider';
import { saveBlob } from '../lib/download';
import { dateTime, fileSize, shortHash } from '../lib/format';
import { isEmail, licensedBody, ownerChoices, type LicensedRow } from '../lib/takedown';

/** Largest rights document the API takes (10 MiB). */
export const MAX_DOCUMENT_BYTES = 10 << 20;

const isConflict = (e: unknown) => e instanceof ApiError && e.code === 'conflict';

/**
 * A write made with the holder's version as read: `busy` while it runs; a `409` (someone
 * saved in between) reads the holder again (`onFresh` gets it) and says so, so nothing is
 * overwritten blindly; another error is shown.
 */
function useVersionedWrite(reload: () => Promise<Holder | undefined>) {
  const { t } = useI18n();
  const { message } = App.useApp();
  const [busy, setBusy] = useState(false);
  const write = async (action: () => Promise<void>, onFresh?: (fresh: Holder) => void) => {
    setBusy(true);
    try {
      await action();
    } catch (e) {
      if (isConflict(e)) {
        const fresh = await reload();
        if (fresh && onFresh) onFresh(fresh);
        message.warning(t('holders.conflict'));
      } else {
        message.error(errorMessage(t, e));
      }
    } finally {
      setBusy(false);
    }
  };
  return { busy, write };
}

/** `/holders`: a holder goes to its own record; admins and analysts choose one. */
export function Holders() {
  const { session, can } = useAuth();
  const { owner } = useParams();
  const me = session!.me;
  if (!can('holders.pick')) {
    if (!me.owner) return <ErrorState error={new ApiError(403, 'forbidden', 'no owner')} />;
    if (owner !== me.owner) return <Navigate to={`/holders/${encodeURIComponent(me.owner)}`} replace />;
  }
  return <HolderPage owner={owner} />;
}

function HolderPicker({ owner }: { owner?: string }) {
  const { t } = useI18n();
  const api = useApiClient();
  const navigate = useNavigate();
  const [owners, setOwners] = useState<string[] | null>(null);
  useEffect(() => {
    Promise.all([api.holders().catch(() => ({ items: [] as Holder[] })), api.works({ limit: 500 }).catch(() => ({ items: [] as WorkItem[] }))]).then(
      ([h, w]) => setOwners(ownerChoices(h.items, w.items)),
    );
  }, [api]);
  return (
    <Select
      showSearch
      style={{ width: 260 }}
      placeholder={t('holders.pick')}
      value={owner}
      loading={owners === null}
      onChange={(v: string) => navigate(`/holders/${encodeURIComponent(v)}`)}
      options={(owners ?? []).map((o) => ({ value: o, label: o }))}
      notFoundContent={owners !== null ? t('holders.noHolders') : undefined}
      data-testid="holder-picker"
    />
  );
}

export function HolderPage({ owner }: { owner?: string }) {
  const { t } = useI18n();
  const { can } = useAuth();
  return (
    <div data-testid="page-holders">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>
          {t('holders.title')}
          {owner && !can('holders.pick') ? ` · ${owner}` : ''}
        </Typography.Title>
        {can('holders.pick') && <HolderPicker owner={owner} />}
      </Space>
      {owner ? <HolderView key={owner} owner={owner} /> : <Card><EmptyState title={t('holders.pickHint')} /></Card>}
    </div>
  );
}

export function HolderView({ owner }: { owner: string }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const [holder, setHolder] = useState<Holder>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(async () => {
    try {
      const h = await api.holder(owner);
      setHolder(h);
      setError(undefined);
      return h;
    } catch (e) {
      setError(e);
      return undefined;
    }
  }, [api, owner]);
  useEffect(() => {
    void load();
  }, [load]);

  if (error !== undefined && !holder) return <ErrorState error={error} onRetry={() => void load()} />;
  if (!holder) return <LoadingState />;
  const writable = can('holders.write');
  return (
    <>
      {!writable && <Alert type="info" showIcon message={t('holders.readOnly')} style={{ marginBottom: 16 }} data-testid="holder-readonly" />}
      <Row gutter={[16, 16]}>
        <Col xs={24} xl={12}>
          <ProfileCard holder={holder} writable={writable} onSaved={setHolder} reload={load} />
        </Col>
        <Col xs={24} xl={12}>
          <DocumentsCard holder={holder} writable={writable} onChanged={setHolder} reload={load} />
        </Col>
        <Col span={24}>
          <LicensedCard holder={holder} writable={writable} onSaved={setHolder} reload={load} />
        </Col>
        <Col span={24}>
          <AlertsCard holder={holder} writable={writable} onSaved={setHolder} reload={load} />
        </Col>
      </Row>
    </>
  );
}

interface CardProps {
  holder: Holder;
  writable: boolean;
  reload: () => Promise<Holder | undefined>;
}

function ProfileCard({ holder, writable, onSaved, reload }: CardProps & { onSaved: (h: Holder) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [form] = Form.useForm<HolderProfile>();
  const { busy, write } = useVersionedWrite(reload);
  useEffect(() => {
    form.setFieldsValue(holder.profile);
  }, [form, holder.profile]);

  const save = (values: HolderProfile) =>
    write(
      async () => {
        const stored = await api.saveProfile(holder.owner, holder.version, {
          legal_name: values.legal_name ?? '',
          contact_person: values.contact_person ?? '',
          address: values.address ?? '',
          phone: values.phone ?? '',
          email: values.email ?? '',
        });
        onSaved(stored);
        message.success(t('holders.saved'));
      },
      // Someone saved first: show what is stored now.
      (fresh) => form.setFieldsValue(fresh.profile),
    );

  const field = (name: keyof HolderProfile, label: string, extra: object = {}) => (
    <Form.Item name={name} label={label} {...extra}>
      <Input data-testid={`profile-${name}`} />
    </Form.Item>
  );

  return (
    <Card title={t('holders.profile')} data-testid="profile-card" extra={<span data-testid="holder-version" data-version={holder.version} />}>
      {holder.version === 0 ? (
        <Alert type="warning" showIcon message={t('holders.notStored')} style={{ marginBottom: 16 }} />
      ) : (
        <Typography.Paragraph type="secondary" data-testid="profile-updated">
          {t('holders.updated', { version: holder.version, at: dateTime(holder.updated_at), by: holder.updated_by })}
        </Typography.Paragraph>
      )}
      <Form form={form} layout="vertical" disabled={!writable} onFinish={save} initialValues={holder.profile}>
        {field('legal_name', t('holders.legalName'))}
        {field('contact_person', t('holders.contactPerson'))}
        {field('address', t('holders.address'))}
        {field('phone', t('holders.phone'))}
        {field('email', t('holders.email'), {
          rules: [{ validator: (_: unknown, v: string) => (!v || isEmail(v) ? Promise.resolve() : Promise.reject(new Error(t('holders.emailInvalid')))) }],
        })}
        {writable && (
          <Button type="primary" htmlType="submit" icon={<SaveOutlined />} loading={busy} data-testid="profile-save">
            {t('holders.save')}
          </Button>
        )}
      </Form>
    </Card>
  );
}

function DocumentsCard({ holder, writable, onChanged, reload }: CardProps & { onChanged: (h: Holder) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const { busy, write } = useVersionedWrite(reload);

  const upload = async (file: File) => {
    if (file.size > MAX_DOCUMENT_BYTES) {
      message.error(t('holders.tooLarge'));
      return;
    }
    await write(async () => {
      await api.uploadDocument(holder.owner, holder.version, file, file.name);
      await reload();
      message.success(t('holders.uploaded', { name: file.name }));
    });
  };

  const download = async (d: HolderDocument) => {
    try {
      saveBlob(await api.holderDocument(holder.owner, d.sha256), d.name);
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  const remove = (d: HolderDocument) =>
    write(async () => {
      onChanged(await api.deleteDocument(holder.owner, holder.version, d.sha256));
      message.success(t('holders.removed', { name: d.name }));
    });

  return (
    <Card
      title={t('holders.documents')}
      data-testid="documents-card"
      extra={
        writable && (
          <Upload
            showUploadList={false}
            beforeUpload={(f) => {
              void upload(f);
              return false;
            }}
          >
            <Button icon={<UploadOutlined />} loading={busy} data-testid="document-upload">
              {t('holders.upload')}
            </Button>
          </Upload>
        )
      }
    >
      <Typography.Paragraph type="secondary">{t('holders.documentsHint')}</Typography.Paragraph>
      <Table<HolderDocument>
        rowKey="sha256"
        size="small"
        pagination={false}
        dataSource={holder.documents}
        locale={{ emptyText: <EmptyState title={t('holders.noDocuments')} /> }}
        data-testid="documents-table"
        columns={[
          { title: t('holders.docName'), dataIndex: 'name', key: 'name', ellipsis: true },
          { title: t('holders.docSize'), dataIndex: 'size', key: 'size', width: 90, render: (n: number) => fileSize(n) },
          { title: t('holders.docUploaded'), dataIndex: 'uploaded_at', key: 'at', width: 140, render: dateTime },
          { title: t('holders.docHash'), dataIndex: 'sha256', key: 'sha', width: 130, render: (h: string) => <Typography.Text code title={h}>{shortHash(h)}</Typography.Text> },
          {
            title: '',
            key: 'actions',
            width: 150,
            render: (_: unknown, d) => (
              <Space size="small">
                <Button size="small" type="link" icon={<DownloadOutlined />} onClick={() => void download(d)} data-testid="document-download">
                  {t('holders.download')}
                </Button>
                {writable && (
                  <Popconfirm title={t('holders.removeConfirm', { name: d.name })} onConfirm={() => remove(d)} okButtonProps={{ 'data-testid': 'document-remove-ok' }}>
                    <Button size="small" type="link" danger icon={<DeleteOutlined />} data-testid="document-remove">
                      {t('holders.remove')}
                    </Button>
                  </Popconfirm>
                )}
              </Space>
            ),
          },
        ]}
      />
    </Card>
  );
}

function rowsOf(h: Holder): LicensedRow[] {
  return h.licensed.map((l) => ({ domain: l.domain, work_id: l.work_id ?? null }));
}

function LicensedCard({ holder, writable, onSaved, reload }: CardProps & { onSaved: (h: Holder) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [rows, setRows] = useState<LicensedRow[]>(() => rowsOf(holder));
  const [works, setWorks] = useState<WorkItem[]>([]);
  const { busy, write } = useVersionedWrite(reload);
  const [invalid, setInvalid] = useState<number[]>([]);
  useEffect(() => setRows(rowsOf(holder)), [holder]);
  useEffect(() => {
    api.works({ owner: holder.owner, limit: 500 }).then((p) => setWorks(p.items.filter((w) => w.owner === holder.owner)), () => setWorks([]));
  }, [api, holder.owner]);

  const set = (i: number, patch: Partial<LicensedRow>) => setRows((old) => old.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  const save = async () => {
    const { domains, errors } = licensedBody(rows);
    setInvalid(errors);
    if (errors.length) {
      message.error(t('holders.domainInvalid', { n: errors[0] + 1 }));
      return;
    }
    await write(async () => {
      const r = await api.saveLicensed(holder.owner, holder.version, domains);
      onSaved(r.holder);
      message.success(t('holders.licensedSaved', { licensed: r.relabelled.licensed, unlicensed: r.relabelled.unlicensed }));
    });
  };

  const meta = (i: number) => {
    const r = rows[i];
    const stored = holder.licensed.find((l) => l.domain === r.domain && (l.work_id ?? null) === (r.work_id ?? null));
    return stored ? t('holders.added', { at: dateTime(stored.added_at), by: stored.added_by }) : '';
  };

  return (
    <Card title={t('holders.licensed')} data-testid="licensed-card">
      <Typography.Paragraph type="secondary">{t('holders.licensedHint')}</Typography.Paragraph>
      {rows.length === 0 && !writable && <EmptyState title={t('holders.noLicensed')} />}
      {rows.map((r, i) => (
        <Space key={i} style={{ display: 'flex', marginBottom: 8 }} wrap data-testid="licensed-row">
          <Input
            value={r.domain}
            status={invalid.includes(i) ? 'error' : undefined}
            disabled={!writable}
            placeholder={t('holders.domainPlaceholder')}
            style={{ width: 260 }}
            onChange={(e) => set(i, { domain: e.target.value })}
            data-testid="licensed-domain"
          />
          <Select
            allowClear
            disabled={!writable}
            style={{ width: 300 }}
            placeholder={t('holders.allWorks')}
            value={r.work_id ?? undefined}
            onChange={(v?: number) => set(i, { work_id: v ?? null })}
            options={works.map((w) => ({ value: w.id, label: w.title }))}
            data-testid="licensed-work"
          />
          <Typography.Text type="secondary">{meta(i)}</Typography.Text>
          {writable && (
            <Button type="text" danger icon={<DeleteOutlined />} onClick={() => setRows((old) => old.filter((_, j) => j !== i))} aria-label={t('holders.remove')} />
          )}
        </Space>
      ))}
      {writable && (
        <Space style={{ marginTop: 8 }}>
          <Button icon={<PlusOutlined />} onClick={() => setRows((old) => [...old, { domain: '', work_id: null }])} data-testid="licensed-add">
            {t('holders.addDomain')}
          </Button>
          <Button type="primary" icon={<SaveOutlined />} loading={busy} onClick={() => void save()} data-testid="licensed-save">
            {t('holders.saveLicensed')}
          </Button>
        </Space>
      )}
    </Card>
  );
}

/** The alert settings of a holder stored before alerts existed (the server's defaults). */
export const DEFAULT_ALERTS: AlertSettings = { recipients: [], min_score: 0.8, mode: 'immediate', max_per_hour: 6, lang: 'zh-CN' };

/** Addresses typed one per line or separated by commas, semicolons or spaces, each once. */
export function splitRecipients(text: string): string[] {
  const out: string[] = [];
  for (const a of text.split(/[\s,;，；]+/)) {
    if (a && !out.includes(a)) out.push(a);
  }
  return out;
}

interface AlertsForm {
  recipients: string;
  min_score: number;
  mode: AlertSettings['mode'];
  max_per_hour: number;
  lang: AlertSettings['lang'];
}

function alertsForm(a: AlertSettings): AlertsForm {
  return { ...a, recipients: a.recipients.join('\n') };
}

function AlertsCard({ holder, writable, onSaved, reload }: CardProps & { onSaved: (h: Holder) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [form] = Form.useForm<AlertsForm>();
  const { busy, write } = useVersionedWrite(reload);
  const stored = holder.alerts ?? DEFAULT_ALERTS;
  useEffect(() => {
    form.setFieldsValue(alertsForm(holder.alerts ?? DEFAULT_ALERTS));
  }, [form, holder.alerts]);

  const save = (v: AlertsForm) => {
    const recipients = splitRecipients(v.recipients ?? '');
    const bad = recipients.find((r) => !isEmail(r));
    if (bad) {
      message.error(t('holders.alertsRecipientInvalid', { address: bad }));
      return;
    }
    return write(
      async () => {
        const next = await api.saveAlerts(holder.owner, holder.version, {
          recipients,
          min_score: v.min_score ?? stored.min_score,
          mode: v.mode ?? stored.mode,
          max_per_hour: v.max_per_hour ?? stored.max_per_hour,
          lang: v.lang ?? stored.lang,
        });
        onSaved(next);
        message.success(t('holders.alertsSaved'));
      },
      (fresh) => form.setFieldsValue(alertsForm(fresh.alerts ?? DEFAULT_ALERTS)),
    );
  };

  return (
    <Card title={t('holders.alerts')} data-testid="alerts-card">
      <Typography.Paragraph type="secondary">{t('holders.alertsHint')}</Typography.Paragraph>
      <Form form={form} layout="vertical" disabled={!writable} onFinish={(v) => void save(v)} initialValues={alertsForm(stored)}>
        <Form.Item name="recipients" label={t('holders.alertsRecipients')}>
          <Input.TextArea rows={2} placeholder="rights@example.com" data-testid="alerts-recipients" />
        </Form.Item>
        <Space wrap size="large">
          <Form.Item name="min_score" label={t('holders.alertsMinScore')}>
            <InputNumber min={0} max={1} step={0.05} data-testid="alerts-min-score" />
          </Form.Item>
          <Form.Item name="mode" label={t('holders.alertsMode')}>
            <Select
              style={{ width: 200 }}
              options={[
                { value: 'immediate', label: t('holders.alertsImmediate') },
                { value: 'digest', label: t('holders.alertsDigest') },
              ]}
              data-testid="alerts-mode"
            />
          </Form.Item>
          <Form.Item name="max_per_hour" label={t('holders.alertsPerHour')}>
            <InputNumber min={1} max={60} data-testid="alerts-per-hour" />
          </Form.Item>
          <Form.Item name="lang" label={t('holders.alertsLang')}>
            <Select
              style={{ width: 140 }}
              options={[
                { value: 'zh-CN', label: '中文' },
                { value: 'en', label: 'English' },
              ]}
              data-testid="alerts-lang"
            />
          </Form.Item>
        </Space>
        {writable && (
          <div>
            <Button type="primary" htmlType="submit" icon={<SaveOutlined />} loading={busy} data-testid="alerts-save">
              {t('holders.alertsSave')}
            </Button>
          </div>
        )}
      </Form>
    </Card>
  );
}
