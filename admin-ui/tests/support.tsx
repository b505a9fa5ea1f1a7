// Shared by the page tests: a fake API server behind `fetch` and a signed-in render.
import { useEffect, type ReactNode } from 'react';
import { render } from '@testing-library/react';
import { App as AntApp } from 'antd';
import { MemoryRouter } from 'react-router-dom';
import { I18nProvider } from '../src/i18n/I18nProvider';
import { AuthProvider, useAuth } from '../src/auth';
import type { Role } from '../src/api/types';

export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
export const apiError = (status: number, code: string, message: string) => json(status, { error: { code, message } });

export type Call = { url: string; method: string; body: string | null };
export type Handler = (url: string, method: string, body: string | null) => Response | undefined;

/** A fake server: `/me` with the role, then the first handler that answers; 404 otherwise. */
export function fakeServer(role: Role, handler: Handler) {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const method = (init?.method ?? 'GET').toUpperCase();
    const body = typeof init?.body === 'string' ? init.body : null;
    calls.push({ url, method, body });
    if (url === '/api/v1/me') return json(200, { key_id: 1, name: 'tester', role, owner: role === 'holder' ? 'luoguan-books' : null, expires_at: null, created_at: 0 });
    return handler(url, method, body) ?? apiError(404, 'not_found', url);
  }) as typeof fetch);
  return calls;
}

export function SignedIn({ children }: { children: ReactNode }) {
  const { session, signIn } = useAuth();
  useEffect(() => {
    void signIn('zw_testkey');
  }, [signIn]);
  return session ? <>{children}</> : null;
}

export function renderSignedIn(ui: ReactNode, lang: 'zh' | 'en' = 'zh') {
  return render(
    <I18nProvider lang={lang}>
      <AntApp>
        <AuthProvider>
          <MemoryRouter future={{ v7_startTransition: true, v7_relativeSplatPath: true }}>
            <SignedIn>{ui}</SignedIn>
          </MemoryRouter>
        </AuthProvider>
      </AntApp>
    </I18nProvider>,
  );
}

