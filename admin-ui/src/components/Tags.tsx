import { Progress, Tag, Tooltip } from 'antd';
import type { NoticeState, RemovalState, ReviewStatus } from '../api/types';
import type { Key } from '../i18n/dict';
import { useI18n } from '../i18n/I18nProvider';
import { percent, scoreLevel } from '../lib/format';

const STATUS_COLORS: Record<ReviewStatus, string> = {
  new: 'blue',
  confirmed: 'red',
  dismissed: 'default',
  takedown_sent: 'green',
  licensed: 'cyan',
};

export function StatusTag({ status }: { status: ReviewStatus }) {
  const { t } = useI18n();
  return (
    <Tag color={STATUS_COLORS[status] ?? 'default'} data-testid="status-tag" data-status={status}>
      {t(`status.${status}` as Key)}
    </Tag>
  );
}

const KIND_COLORS: Record<string, string> = {
  identical: 'red',
  near_duplicate: 'volcano',
  embedded: 'orange',
  excerpt: 'gold',
};

export function KindTag({ kind }: { kind: string }) {
  const { t } = useI18n();
  const key = `kind.${kind}` as Key;
  const label = t(key);
  return (
    <Tag color={KIND_COLORS[kind] ?? 'default'} data-testid="kind-tag" data-kind={kind}>
      {label === key ? kind : label}
    </Tag>
  );
}

export function ScoreBar({ score }: { score: number }) {
  const { t } = useI18n();
  const level = scoreLevel(score);
  const color = level === 'high' ? '#cf1322' : level === 'medium' ? '#fa8c16' : '#8c8c8c';
  return (
    <Tooltip title={t(`score.${level}` as Key)}>
      <div style={{ minWidth: 110 }}>
        <Progress percent={Math.round(score * 100)} status="normal" size="small" strokeColor={color} format={() => <span style={{ color: '#595959' }}>{percent(score)}</span>} />
      </div>
    </Tooltip>
  );
}

const NOTICE_COLORS: Record<NoticeState, string> = {
  draft: 'default',
  sending: 'orange',
  sent: 'green',
  exported: 'blue',
  cancelled: 'default',
};

export function NoticeStateTag({ state }: { state: NoticeState }) {
  const { t } = useI18n();
  return (
    <Tag color={NOTICE_COLORS[state] ?? 'default'} data-testid="notice-state" data-state={state}>
      {t(`notices.state.${state}` as Key)}
    </Tag>
  );
}

const REMOVAL_COLORS: Record<RemovalState, string> = { up: 'red', changed: 'volcano', removed: 'green' };

export function RemovalStateTag({ state }: { state: RemovalState }) {
  const { t } = useI18n();
  return (
    <Tag color={REMOVAL_COLORS[state] ?? 'default'} data-testid="removal-state" data-state={state}>
      {t(`removals.state.${state}` as Key)}
    </Tag>
  );
}
