import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import { I18nProvider } from '../src/i18n/I18nProvider';
import { AuthProvider } from '../src/auth';
import { OverviewBody } from '../src/pages/Overview';
import type { Stats } from '../src/api/types';

const base: Stats = {
  from: '2026-10-23',
  to: '2026-11-21',
  total: 0,
  new_today: 0,
  new_this_week: 0,
  by_status: {},
  by_day: [],
  top_sites: [],
  top_works: [],
  totals: { works: 0, pages: 0, matches_all_time: 0 },
};

function renderOverview(stats: Stats, lang: 'zh' | 'en' = 'zh') {
  return render(
    <I18nProvider lang={lang}>
      <AuthProvider>
        <MemoryRouter future={{ v7_startTransition: true, v7_relativeSplatPath: true }}>
          <OverviewBody stats={stats} />
        </MemoryRouter>
      </AuthProvider>
    </I18nProvider>,
  );
}

describe('Overview', () => {
  it('tells a new holder to register works first', () => {
    renderOverview(base);
    expect(screen.getByText('还没有登记作品')).toBeInTheDocument();
    expect(screen.getByText('先登记您的作品，系统会每天把收录的网页与作品比对。')).toBeInTheDocument();
  });

  it('shows the counts and says when nothing was found', () => {
    renderOverview({
      ...base,
      new_today: 0,
      new_this_week: 0,
      by_status: { confirmed: 4, takedown_sent: 2 },
      totals: { works: 52, pages: 100233, matches_all_time: 5120 },
    });
    expect(screen.getByText('共登记 52 部作品，已收录 100,233 个网页，累计发现 5,120 条线索。')).toBeInTheDocument();
    expect(screen.getAllByText('近 30 天没有发现侵权线索').length).toBeGreaterThan(0);
    expect(screen.getByText('已确认侵权')).toBeInTheDocument();
    expect(screen.getByText('4')).toBeInTheDocument();
  });

  it('links the most copied works to their matches', () => {
    renderOverview(
      { ...base, totals: { works: 2, pages: 9, matches_all_time: 7 }, top_works: [{ work_id: 7, title: '红楼梦 第一回', owner: 'demo', count: 7 }] },
      'en',
    );
    expect(screen.getByRole('link', { name: '红楼梦 第一回' })).toHaveAttribute('href', '/works/7');
    expect(screen.getByRole('link', { name: '7' })).toHaveAttribute('href', '/matches?work_id=7');
  });
});

describe('Overview by kind', () => {
  it('counts the kinds of copy and links each to its matches', () => {
    renderOverview({ ...base, total: 5, by_kind: { identical: 1, embedded: 3, excerpt: 1 }, totals: { works: 2, pages: 9, matches_all_time: 5 } });
    expect(screen.getByTestId('kinds')).toHaveTextContent('近 30 天按类型：完全相同 1整章近似 0整章嵌入 3摘抄片段 1');
    expect(screen.getByTestId('kind-count-embedded')).toHaveAttribute('href', '/matches?kind=embedded');
  });

  it('says nothing by kind when nothing was found', () => {
    renderOverview({ ...base, by_kind: { identical: 0, near_duplicate: 0, embedded: 0, excerpt: 0 } });
    expect(screen.queryByTestId('kinds')).toBeNull();
  });
});

describe('Overview for a holder', () => {
  it('does not claim a page count the API withholds', () => {
    renderOverview({ ...base, totals: { works: 3, pages: null, matches_all_time: 12 } });
    expect(screen.getByText('您共登记 3 部作品，累计发现 12 条侵权线索。')).toBeInTheDocument();
  });
});
