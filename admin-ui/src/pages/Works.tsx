import { useState } from 'react';
import { App, Button, Card, Form, Input, Modal, Space, Table, Tabs, Typography, Upload } from 'antd';
import { PlusOutlined, UploadOutlined } from '@ant-design/icons';
import { Link, useSearchParams } from 'react-router-dom';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { usePaged } from '../lib/usePaged';
import type { Key } from '../i18n/dict';
import { ErrorState, EmptyState, errorMessage } from '../components/States';
import { count } from '../lib/format';
import type { WorkItem } from '../api/types';

export function Works() {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const owner = params.get('owner') ?? '';
  const [uploadOpen, setUploadOpen] = useState(params.get('upload') === '1');

  const { items, cursor, loading, error, loadMore, reload } = usePaged(
    (cursor) => api.works({ q: q || undefined, owner: can('works.filterOwner') ? owner || undefined : undefined, cursor, limit: 50 }),
    [api, q, owner],
  );

  const setQuery = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    next.delete('upload');
    setParams(next, { replace: true });
  };

  return (
    <div data-testid="page-works">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Typography.Title level={3} style={{ margin: 0 }}>{t('works.title')}</Typography.Title>
        {can('works.write') && (
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setUploadOpen(true)} data-testid="upload-open">
            {t('works.upload')}
          </Button>
        )}
      </Space>
      <Card>
        <Space style={{ marginBottom: 16 }} wrap>
          <Input.Search allowClear defaultValue={q} placeholder={t('works.search')} onSearch={(v) => setQuery('q', v.trim())} style={{ width: 320 }} data-testid="works-search" />
          {can('works.filterOwner') && (
            <Input.Search allowClear defaultValue={owner} placeholder={t('works.owner')} onSearch={(v) => setQuery('owner', v.trim())} style={{ width: 200 }} />
          )}
        </Space>
        {error !== undefined && !loading ? (
          <ErrorState error={error} onRetry={() => reload()} />
        ) : (
          <>
            <Table
              rowKey="id"
              loading={loading}
              dataSource={items}
              pagination={false}
              data-testid="works-table"
              locale={{
                emptyText: loading ? ' ' : <EmptyState title={q ? t('works.emptySearch', { q }) : t('works.empty')} hint={q ? undefined : t('overview.noWorksHint')} />,
              }}
              columns={[
                { title: t('works.titleCol'), dataIndex: 'title', render: (title: string, r) => <Link to={`/works/${r.id}`}>{title}</Link> },
                { title: t('works.author'), dataIndex: 'author' },
                { title: t('works.externalId'), dataIndex: 'external_id' },
                ...(can('works.filterOwner') ? [{ title: t('works.owner'), dataIndex: 'owner' }] : []),
                { title: t('works.sections'), dataIndex: 'section_count', align: 'right' as const },
                {
                  title: t('works.matches'),
                  dataIndex: 'match_count',
                  align: 'right' as const,
                  render: (c: number, r: WorkItem) => (c > 0 ? <Link to={`/matches?work_id=${r.id}`}>{count(c)}</Link> : '0'),
                },
              ]}
            />
            {cursor && (
              <div style={{ textAlign: 'center', marginTop: 16 }}>
                <Button onClick={loadMore} loading={loading}>{t('works.loadMore')}</Button>
              </div>
            )}
          </>
        )}
      </Card>
      <UploadModal open={uploadOpen} onClose={() => setUploadOpen(false)} onSaved={() => reload()} />
    </div>
  );
}

function UploadModal({ open, onClose, onSaved }: { open: boolean; onClose: () => void; onSaved: () => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { session } = useAuth();
  const { message } = App.useApp();
  const isAdmin = session?.me.role === 'admin';
  const [owner, setOwner] = useState('');
  const [busy, setBusy] = useState(false);
  const [form] = Form.useForm();

  const upload = async (file: File) => {
    if (isAdmin && !owner.trim()) {
      message.error(t('works.ownerRequiredHint'));
      return;
    }
    setBusy(true);
    try {
      const res = await api.uploadWork(file, file.name, isAdmin ? owner.trim() : undefined);
      if (res.works.length > 0) message.success(t('works.uploaded', { titles: res.works.map((w) => w.title ?? `#${w.id}`).join('、') }));
      else message.info(t('works.uploadCounts', { imported: res.imported ?? 0, updated: res.updated ?? 0, unchanged: res.unchanged ?? 0 }));
      const rejected = res.rejected ?? [];
      if (rejected.length > 0) {
        message.warning(t('works.uploadRejected', { n: rejected.length, reasons: rejected.slice(0, 3).map((r) => `${r.item}（${r.reason}）`).join('；') }), 8);
      }
      onSaved();
      onClose();
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setBusy(false);
    }
  };

  const save = async (v: { owner?: string; external_id: string; title: string; author: string; text: string }) => {
    setBusy(true);
    try {
      const res = await api.createWork({ ...v, owner: isAdmin ? v.owner?.trim() : undefined, author: v.author ?? '' });
      message.success(t('works.saved', { outcome: t(`works.outcome.${res.outcome === 'changed' ? 'updated' : res.outcome}` as Key), n: res.section_count }));
      form.resetFields();
      onSaved();
      onClose();
    } catch (e) {
      message.error(errorMessage(t, e));
    } finally {
      setBusy(false);
    }
  };

  const req = (field: string) => [{ required: true, whitespace: true, message: t('works.required', { field }) }];

  return (
    <Modal open={open} title={t('works.upload')} onCancel={onClose} footer={null} width={680} destroyOnClose>
      <Tabs
        items={[
          {
            key: 'file',
            label: t('works.uploadFile'),
            children: (
              <Space direction="vertical" style={{ width: '100%' }}>
                {isAdmin && <Input placeholder={t('works.owner')} value={owner} onChange={(e) => setOwner(e.target.value)} data-testid="upload-owner" />}
                <Typography.Paragraph type="secondary">{t('works.fileHint')}</Typography.Paragraph>
                <Upload
                  accept=".txt,.md,.html,.htm,.epub,.jsonl"
                  showUploadList={false}
                  beforeUpload={(file) => {
                    void upload(file);
                    return false;
                  }}
                >
                  <Button icon={<UploadOutlined />} loading={busy}>{t('works.chooseFile')}</Button>
                </Upload>
              </Space>
            ),
          },
          {
            key: 'text',
            label: t('works.pasteText'),
            children: (
              <Form form={form} layout="vertical" onFinish={save} requiredMark={false}>
                {isAdmin && (
                  <Form.Item name="owner" label={t('works.owner')} rules={req(t('works.owner'))}>
                    <Input />
                  </Form.Item>
                )}
                <Space style={{ width: '100%' }} align="start">
                  <Form.Item name="title" label={t('works.titleCol')} rules={req(t('works.titleCol'))}>
                    <Input style={{ width: 220 }} data-testid="paste-title" />
                  </Form.Item>
                  <Form.Item name="author" label={t('works.author')}>
                    <Input style={{ width: 160 }} />
                  </Form.Item>
                  <Form.Item name="external_id" label={t('works.externalId')} rules={req(t('works.externalId'))}>
                    <Input style={{ width: 160 }} data-testid="paste-external-id" />
                  </Form.Item>
                </Space>
                <Form.Item name="text" label={t('works.text')} extra={t('works.textHint')} rules={req(t('works.text'))}>
                  <Input.TextArea rows={10} data-testid="paste-text" />
                </Form.Item>
                <Button type="primary" htmlType="submit" loading={busy} data-testid="paste-save">{t('works.save')}</Button>
              </Form>
            ),
          },
        ]}
      />
    </Modal>
  );
}
