import { useEffect, useState } from 'react';
import { Alert, App, Form, Input, Modal, Radio, Select, Typography } from 'antd';
import type { Holder, Notice, NoticeLang, WorkItem } from '../api/types';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { noticeReference, ownerChoices } from '../lib/takedown';
import { errorMessage } from './States';

export interface DraftInitial {
  owner?: string;
  site?: string;
  /** Only these (confirmed) matches; none: every confirmed match of the holder on the site. */
  matchIds?: number[];
}

/** The "draft a notice" dialog: holder (admins and analysts choose), site, language. */
export function DraftNoticeModal({ open, initial, onClose, onDrafted }: { open: boolean; initial: DraftInitial; onClose: () => void; onDrafted: (n: Notice) => void }) {
  const { t, lang } = useI18n();
  const api = useApiClient();
  const { session, can } = useAuth();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ owner?: string; site: string; providerSites?: string[]; lang: NoticeLang }>();
  const [owners, setOwners] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const pick = can('holders.pick');

  const start = { owner: initial.owner ?? session?.me.owner ?? undefined, site: initial.site ?? '', lang: (lang === 'en' ? 'en' : 'zh-CN') as NoticeLang };
  useEffect(() => {
    if (!open) return;
    setError(undefined);
    if (pick) {
      Promise.all([api.holders().catch(() => ({ items: [] as Holder[] })), api.works({ limit: 500 }).catch(() => ({ items: [] as WorkItem[] }))]).then(([h, w]) =>
        setOwners(ownerChoices(h.items, w.items)),
      );
    }
  }, [open, api, pick]);

  const submit = async () => {
    const v = await form.validateFields();
    setBusy(true);
    setError(undefined);
    try {
      const n = await api.draftNotice({
        owner: pick ? v.owner : undefined,
        site: v.site.trim().toLowerCase(),
        provider_sites: (v.providerSites ?? []).map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0),
        lang: v.lang,
        match_ids: initial.matchIds && initial.matchIds.length ? initial.matchIds : undefined,
      });
      message.success(t('draft.created', { ref: noticeReference(n.id) }));
      onDrafted(n);
    } catch (e) {
      // e.g. the holder's profile lacks its address, or no confirmed match on the site
      setError(errorMessage(t, e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open={open}
      title={t('draft.title')}
      onCancel={onClose}
      onOk={() => void submit()}
      okText={t('draft.submit')}
      confirmLoading={busy}
      okButtonProps={{ 'data-testid': 'draft-ok' }}
      destroyOnClose
    >
      <Typography.Paragraph type="secondary">{t('draft.intro')}</Typography.Paragraph>
      {initial.matchIds && initial.matchIds.length > 0 && <Alert type="info" message={t('draft.selected', { n: initial.matchIds.length })} style={{ marginBottom: 12 }} />}
      <Form form={form} layout="vertical" preserve={false} initialValues={start}>
        {pick && (
          <Form.Item name="owner" label={t('draft.owner')} rules={[{ required: true, message: t('draft.required', { field: t('draft.owner') }) }]}>
            <Select showSearch options={owners.map((o) => ({ value: o, label: o }))} data-testid="draft-owner" />
          </Form.Item>
        )}
        <Form.Item name="site" label={t('draft.site')} rules={[{ required: true, whitespace: true, message: t('draft.required', { field: t('draft.site') }) }]}>
          <Input placeholder={t('draft.sitePlaceholder')} data-testid="draft-site" />
        </Form.Item>
        <Form.Item name="providerSites" label={t('draft.providerSites')} extra={t('draft.providerSitesHelp')}>
          <Select mode="tags" tokenSeparators={[',', ' ', '，']} open={false} data-testid="draft-provider-sites" />
        </Form.Item>
        <Form.Item name="lang" label={t('draft.lang')}>
          <Radio.Group>
            <Radio value="zh-CN">{t('draft.langZh')}</Radio>
            <Radio value="en">{t('draft.langEn')}</Radio>
          </Radio.Group>
        </Form.Item>
      </Form>
      {error && <Alert type="error" showIcon message={error} data-testid="draft-error" />}
    </Modal>
  );
}
