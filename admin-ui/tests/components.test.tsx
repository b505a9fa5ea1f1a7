import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router-dom';
import { I18nProvider, useI18n } from '../src/i18n/I18nProvider';
import { dictionaries } from '../src/i18n/dict';
import { KindTag, StatusTag } from '../src/components/Tags';
import { MATCH_KINDS } from '../src/api/types';
import { MarkedText } from '../src/components/Passage';
import { ErrorState } from '../src/components/States';
import { ApiError } from '../src/api/client';
import { roleCan } from '../src/auth';
import { passageSegments } from '../src/lib/highlight';
import { taskPercent } from '../src/pages/Tasks';
import { AuthProvider } from '../src/auth';
import { SignIn } from '../src/pages/SignIn';

function Toggle() {
  const { t, toggle } = useI18n();
  return (
    <>
      <h1>{t('nav.matches')}</h1>
      <button onClick={toggle}>{t('header.switchLang')}</button>
    </>
  );
}

beforeEach(() => localStorage.clear());

describe('KindTag', () => {
  it('names every kind of copy in Chinese and in English', () => {
    const zh = ['完全相同', '整章近似', '整章嵌入', '摘抄片段'];
    const en = ['Identical', 'Near duplicate', 'Embedded chapter', 'Excerpt'];
    for (const [lang, words] of [['zh', zh], ['en', en]] as const) {
      const { unmount } = render(
        <I18nProvider lang={lang}>
          {MATCH_KINDS.map((k) => <KindTag key={k} kind={k} />)}
        </I18nProvider>,
      );
      expect(screen.getAllByTestId('kind-tag').map((e) => e.textContent)).toEqual(words);
      unmount();
    }
    expect(MATCH_KINDS).toEqual(['identical', 'near_duplicate', 'embedded', 'excerpt']);
  });
});

describe('i18n', () => {
  it('starts in Chinese and switches to English and back, remembering the choice', async () => {
    const user = userEvent.setup();
    const { unmount } = render(<I18nProvider><Toggle /></I18nProvider>);
    expect(screen.getByRole('heading')).toHaveTextContent('侵权线索');
    await user.click(screen.getByRole('button', { name: 'English' }));
    expect(screen.getByRole('heading')).toHaveTextContent('Matches');
    expect(localStorage.getItem('zhiwen.lang')).toBe('en');
    unmount();
    render(<I18nProvider><Toggle /></I18nProvider>);
    expect(screen.getByRole('heading')).toHaveTextContent('Matches');
    await user.click(screen.getByRole('button', { name: '中文' }));
    expect(screen.getByRole('heading')).toHaveTextContent('侵权线索');
  });

  it('has every text in both languages with the same placeholders', () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [key, zh] of Object.entries(dictionaries.zh)) {
      const en = dictionaries.en[key as keyof typeof dictionaries.en];
      expect(en, key).toBeTypeOf('string');
      expect(names(en), key).toEqual(names(zh));
      if (key !== 'overview.matchesUnit') expect(zh.trim().length, key).toBeGreaterThan(0);
    }
  });
});

describe('components', () => {
  it('StatusTag names review states in Chinese', () => {
    render(<I18nProvider lang="zh"><StatusTag status="takedown_sent" /><StatusTag status="new" /></I18nProvider>);
    expect(screen.getByText('已发下架通知')).toBeInTheDocument();
    expect(screen.getByText('待审核')).toBeInTheDocument();
  });

  it('MarkedText highlights only the copied span', () => {
    const { container } = render(<MarkedText segments={passageSegments({ before: '前文', text: '此開卷第一回也', after: '後文' })} />);
    const marks = container.querySelectorAll('mark.copied');
    expect(marks).toHaveLength(1);
    expect(marks[0]).toHaveTextContent('此開卷第一回也');
    expect(container).toHaveTextContent('前文此開卷第一回也後文');
  });

  it('ErrorState tells the user what to do, in their language', () => {
    render(<I18nProvider lang="zh"><ErrorState error={new ApiError(0, 'network', 'Failed to fetch')} /></I18nProvider>);
    expect(screen.getByTestId('error-message')).toHaveTextContent('无法连接服务器，请检查网络，或确认 zhiwen serve 正在运行。');
  });

  it('ErrorState shows the server message of a bad request', () => {
    render(<I18nProvider lang="en"><ErrorState error={new ApiError(400, 'bad_request', 'min_score must be in 0..1')} /></I18nProvider>);
    expect(screen.getByTestId('error-message')).toHaveTextContent('Invalid request: min_score must be in 0..1');
  });
});

describe('roles', () => {
  it('holders see no task or owner controls; analysts cannot start tasks or write works', () => {
    expect(roleCan('holder', 'tasks.read')).toBe(false);
    expect(roleCan('holder', 'works.filterOwner')).toBe(false);
    expect(roleCan('holder', 'works.write')).toBe(true);
    expect(roleCan('analyst', 'tasks.read')).toBe(true);
    expect(roleCan('analyst', 'tasks.write')).toBe(false);
    expect(roleCan('analyst', 'works.write')).toBe(false);
    expect(roleCan('admin', 'tasks.write')).toBe(true);
  });
});

describe('taskPercent', () => {
  it('uses the API percent, else done/total, else unknown', () => {
    expect(taskPercent({ state: 'running', percent: 24, progress: { done: 1, total: 2, failed: 0 } })).toBe(24);
    expect(taskPercent({ state: 'running', percent: null, progress: { done: 1, total: 3, failed: 0 } })).toBe(33.3);
    expect(taskPercent({ state: 'queued', percent: null, progress: { done: 0, total: 0, failed: 0 } })).toBeNull();
    expect(taskPercent({ state: 'succeeded', percent: null, progress: { done: 5, total: 0, failed: 0 } })).toBe(100);
  });
});

describe('SignIn', () => {
  it('rejects a key that is not a zhiwen key before asking the server', async () => {
    render(
      <I18nProvider lang="zh">
        <AuthProvider>
          <MemoryRouter future={{ v7_startTransition: true, v7_relativeSplatPath: true }}>
            <SignIn />
          </MemoryRouter>
        </AuthProvider>
      </I18nProvider>,
    );
    fireEvent.change(screen.getByTestId('key-input'), { target: { value: 'hello' } });
    fireEvent.click(screen.getByTestId('sign-in'));
    expect(await screen.findByText('密钥应以 zw_ 开头，请检查是否复制完整')).toBeInTheDocument();
  });
});
