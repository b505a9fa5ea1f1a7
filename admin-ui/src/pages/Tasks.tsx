import { useEffect, useState } from 'react';
import { Alert, App, Badge, Button, Card, DatePicker, Form, Input, InputNumber, Modal, Progress, Radio, Space, Table, Tag, Typography } from 'antd';
import { PlayCircleOutlined, GlobalOutlined } from '@ant-design/icons';
import { useApiClient, useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import type { Key } from '../i18n/dict';
import { EmptyState, ErrorState, errorMessage } from '../components/States';
import { dateTime } from '../lib/format';
import type { Task, TaskState } from '../api/types';

const STATE_COLORS: Record<TaskState, string> = {
  queued: 'default',
  running: 'processing',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'warning',
};

/** Percent of a task: the API's, or done/total, or null when the total is unknown. */
export function taskPercent(task: Pick<Task, 'percent' | 'progress' | 'state'>): number | null {
  if (task.state === 'succeeded') return 100;
  if (task.percent !== null && task.percent !== undefined) return Math.round(task.percent * 10) / 10;
  if (task.progress.total > 0) return Math.round((task.progress.done / task.progress.total) * 1000) / 10;
  return null;
}

export function Tasks() {
  const { t } = useI18n();
  const api = useApiClient();
  const { can } = useAuth();
  const { message } = App.useApp();
  const [tasks, setTasks] = useState<Task[]>();
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);
  const [matchOpen, setMatchOpen] = useState(false);
  const [crawlOpen, setCrawlOpen] = useState(false);

  const live = (tasks ?? []).some((x) => x.state === 'queued' || x.state === 'running');

  useEffect(() => {
    let stop = false;
    api.tasks({ limit: 100 }).then(
      (p) => {
        if (stop) return;
        setTasks(p.items);
        setError(undefined);
      },
      (e) => !stop && setError(e),
    );
    return () => {
      stop = true;
    };
  }, [api, tick]);

  // Live progress: poll every 1.5 s while something is queued or running.
  useEffect(() => {
    if (!live) return;
    const h = setTimeout(() => setTick((x) => x + 1), 1500);
    return () => clearTimeout(h);
  }, [live, tasks]);

  const started = (task: Task) => {
    message.success(t('tasks.started', { id: task.id }));
    setTick((x) => x + 1);
  };

  const cancel = async (id: number) => {
    try {
      await api.cancelTask(id);
      setTick((x) => x + 1);
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };

  return (
    <div data-testid="page-tasks">
      <Space style={{ width: '100%', justifyContent: 'space-between', marginBottom: 16 }} wrap>
        <Space>
          <Typography.Title level={3} style={{ margin: 0 }}>{t('tasks.title')}</Typography.Title>
          {live && <Badge status="processing" text={t('tasks.live')} />}
        </Space>
        {can('tasks.write') && (
          <Space>
            <Button type="primary" icon={<PlayCircleOutlined />} onClick={() => setMatchOpen(true)} data-testid="start-match">{t('tasks.startMatch')}</Button>
            <Button icon={<GlobalOutlined />} onClick={() => setCrawlOpen(true)}>{t('tasks.startCrawl')}</Button>
          </Space>
        )}
      </Space>
      {!can('tasks.write') && <Alert type="info" showIcon message={t('tasks.readOnly')} style={{ marginBottom: 16 }} />}
      <Card>
        {error !== undefined ? (
          <ErrorState error={error} onRetry={() => setTick((x) => x + 1)} />
        ) : (
          <Table<Task>
            rowKey="id"
            loading={tasks === undefined}
            dataSource={tasks ?? []}
            pagination={false}
            data-testid="tasks-table"
            locale={{ emptyText: tasks === undefined ? ' ' : <EmptyState title={t('tasks.empty')} hint={t('tasks.emptyHint')} /> }}
            columns={[
              { title: '#', dataIndex: 'id', width: 60 },
              { title: t('tasks.kind'), dataIndex: 'kind', render: (k: string) => { const key = `tasks.kind.${k}` as Key; const l = t(key); return l === key ? k : l; } },
              {
                title: t('tasks.state'),
                dataIndex: 'state',
                render: (s: TaskState) => <Tag color={STATE_COLORS[s]} data-testid="task-state" data-state={s}>{t(`tasks.state.${s}` as Key)}</Tag>,
              },
              {
                title: t('tasks.progress'),
                key: 'progress',
                width: 280,
                render: (_: unknown, task) => {
                  const p = taskPercent(task);
                  return (
                    <div>
                      {p === null ? (
                        <Progress percent={task.state === 'running' ? 50 : 0} status="active" showInfo={false} size="small" />
                      ) : (
                        <Progress percent={p} size="small" status={task.state === 'failed' ? 'exception' : task.state === 'running' ? 'active' : undefined} />
                      )}
                      <Typography.Text type="secondary" style={{ fontSize: 12 }}>
                        {task.progress.done.toLocaleString()} / {task.progress.total ? task.progress.total.toLocaleString() : '?'}
                        {task.progress.failed > 0 ? ` · ${t('tasks.failedItems', { n: task.progress.failed })}` : ''}
                      </Typography.Text>
                    </div>
                  );
                },
              },
              { title: t('tasks.created'), dataIndex: 'created_at', render: dateTime },
              { title: t('tasks.finished'), dataIndex: 'finished_at', render: dateTime },
              { title: t('tasks.error'), dataIndex: 'error', ellipsis: true, render: (e: string | null) => (e ? <Typography.Text type="danger">{e}</Typography.Text> : '') },
              ...(can('tasks.write')
                ? [
                    {
                      title: '',
                      key: 'cancel',
                      render: (_: unknown, task: Task) =>
                        task.state === 'queued' || task.state === 'running' ? (
                          <Button size="small" onClick={() => cancel(task.id)}>{t('tasks.cancel')}</Button>
                        ) : null,
                    },
                  ]
                : []),
            ]}
          />
        )}
      </Card>
      <StartMatch open={matchOpen} onClose={() => setMatchOpen(false)} onStarted={started} />
      <StartCrawl open={crawlOpen} onClose={() => setCrawlOpen(false)} onStarted={started} />
    </div>
  );
}

function StartMatch({ open, onClose, onStarted }: { open: boolean; onClose: () => void; onStarted: (t: Task) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [form] = Form.useForm();
  const scope = Form.useWatch('scope', form);
  const submit = async (v: { scope: 'new' | 'all' | 'since'; since?: { format: (f: string) => string } }) => {
    try {
      onStarted(await api.startMatch(v.scope, v.since?.format('YYYY-MM-DD')));
      onClose();
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };
  return (
    <Modal open={open} title={t('tasks.startMatch')} onCancel={onClose} onOk={() => form.submit()} okText={t('tasks.startMatch')} cancelText={t('common.cancel')} okButtonProps={{ 'data-testid': 'start-match-ok' } as never}>
      <Form form={form} layout="vertical" initialValues={{ scope: 'new' }} onFinish={submit}>
        <Form.Item name="scope" label={t('tasks.scope')}>
          <Radio.Group>
            <Space direction="vertical">
              <Radio value="new">{t('tasks.scope.new')}</Radio>
              <Radio value="all">{t('tasks.scope.all')}</Radio>
              <Radio value="since">{t('tasks.scope.since')}</Radio>
            </Space>
          </Radio.Group>
        </Form.Item>
        {scope === 'since' && (
          <Form.Item name="since" label={t('tasks.since')} rules={[{ required: true, message: t('works.required', { field: t('tasks.since') }) }]}>
            <DatePicker />
          </Form.Item>
        )}
      </Form>
    </Modal>
  );
}

function StartCrawl({ open, onClose, onStarted }: { open: boolean; onClose: () => void; onStarted: (t: Task) => void }) {
  const { t } = useI18n();
  const api = useApiClient();
  const { message } = App.useApp();
  const [form] = Form.useForm();
  const submit = async (v: { seeds: string; max_pages?: number; max_depth?: number }) => {
    const seeds = v.seeds.split(/\s+/).map((s) => s.trim()).filter(Boolean);
    try {
      onStarted(await api.startCrawl(seeds, v.max_pages ?? undefined, v.max_depth ?? undefined));
      onClose();
    } catch (e) {
      message.error(errorMessage(t, e));
    }
  };
  return (
    <Modal open={open} title={t('tasks.startCrawl')} onCancel={onClose} onOk={() => form.submit()} okText={t('tasks.startCrawl')} cancelText={t('common.cancel')}>
      <Form form={form} layout="vertical" initialValues={{ max_pages: 1000, max_depth: 3 }} onFinish={submit}>
        <Form.Item name="seeds" label={t('tasks.seeds')} rules={[{ required: true, whitespace: true, message: t('tasks.seedsRequired') }]}>
          <Input.TextArea rows={4} placeholder="https://example.com/book/" />
        </Form.Item>
        <Space>
          <Form.Item name="max_pages" label={t('tasks.maxPages')}>
            <InputNumber min={1} max={1_000_000} />
          </Form.Item>
          <Form.Item name="max_depth" label={t('tasks.maxDepth')}>
            <InputNumber min={0} max={20} />
          </Form.Item>
        </Space>
      </Form>
    </Modal>
  );
}
