import { Button, Empty, Result, Spin } from 'antd';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client';
import type { Key } from '../i18n/dict';
import { useI18n } from '../i18n/I18nProvider';

/** The sentence telling the user what went wrong and what to do about it. */
export function errorMessage(t: (k: Key, v?: Record<string, string | number>) => string, e: unknown): string {
  if (e instanceof ApiError) {
    switch (e.code) {
      case 'unauthorized':
      case 'forbidden':
      case 'not_found':
      case 'payload_too_large':
      case 'rate_limited':
      case 'unavailable':
      case 'internal':
      case 'network':
        return t(`err.${e.code}` as Key);
      case 'bad_request':
      case 'conflict':
        return t(`err.${e.code}` as Key, { message: e.message });
      default:
        return t('err.unknown', { message: e.message });
    }
  }
  return t('err.unknown', { message: e instanceof Error ? e.message : String(e) });
}

export function ErrorState({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n();
  const status = error instanceof ApiError && error.code === 'forbidden' ? '403' : error instanceof ApiError && error.code === 'not_found' ? '404' : 'warning';
  return (
    <Result
      status={status}
      subTitle={<span data-testid="error-message">{errorMessage(t, error)}</span>}
      extra={onRetry ? <Button onClick={onRetry}>{t('state.retry')}</Button> : undefined}
    />
  );
}

export function LoadingState() {
  const { t } = useI18n();
  return (
    <div style={{ padding: 48, textAlign: 'center' }} data-testid="loading">
      <Spin />
      <div style={{ marginTop: 12, color: '#888' }}>{t('state.loading')}</div>
    </div>
  );
}

export function EmptyState({ title, hint, action }: { title: string; hint?: string; action?: ReactNode }) {
  return (
    <Empty
      data-testid="empty"
      description={
        <div>
          <div style={{ fontWeight: 500 }}>{title}</div>
          {hint && <div style={{ color: '#888', marginTop: 4 }}>{hint}</div>}
        </div>
      }
    >
      {action}
    </Empty>
  );
}

/** Loading / error / content, in one place. */
export function Loadable<T>({
  state,
  children,
}: {
  state: { data: T | undefined; error: unknown; loading: boolean; reload: () => void };
  children: (data: T) => ReactNode;
}) {
  if (state.error && !state.loading) return <ErrorState error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return state.error ? <ErrorState error={state.error} onRetry={state.reload} /> : <LoadingState />;
  return <>{children(state.data)}</>;
}
