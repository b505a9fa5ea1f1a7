import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { ApiClient } from './api/client';
import type { Me, Role } from './api/types';

const KEY_STORAGE = 'zhiwen.apiKey';

export interface Session {
  key: string;
  me: Me;
}

interface AuthValue {
  session: Session | null;
  api: ApiClient | null;
  /** Check a key with `GET /api/v1/me`; on success it is kept in sessionStorage. */
  signIn: (key: string) => Promise<Me>;
  signOut: () => void;
  /** Restore a key kept from earlier in this tab (the page was reloaded). */
  restore: () => Promise<boolean>;
  can: (action: Action) => boolean;
}

/** What the UI offers per role (the API enforces the same rules). */
export type Action =
  | 'works.write'
  | 'works.filterOwner'
  | 'tasks.read'
  | 'tasks.write'
  | 'review'
  | 'holders.write'
  | 'holders.pick'
  | 'notices.resolve';

export function roleCan(role: Role, action: Action): boolean {
  switch (action) {
    case 'works.write':
      return role === 'admin' || role === 'holder';
    case 'works.filterOwner':
      return role !== 'holder';
    case 'tasks.read':
      return role !== 'holder';
    case 'tasks.write':
      return role === 'admin';
    case 'review':
      return true;
    // a holder edits its own record; analysts read
    case 'holders.write':
      return role === 'admin' || role === 'holder';
    // admins and analysts choose among holders; a holder sees its own
    case 'holders.pick':
      return role !== 'holder';
    // recording the outcome of a send left `sending`
    case 'notices.resolve':
      return role === 'admin';
  }
}

const AuthContext = createContext<AuthValue | null>(null);

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(null);

  const signOut = useCallback(() => {
    try {
      sessionStorage.removeItem(KEY_STORAGE);
    } catch {
      /* ignore */
    }
    setSession(null);
  }, []);

  const signIn = useCallback(
    async (key: string) => {
      const k = key.trim();
      const me = await new ApiClient({ key: k }).me();
      try {
        sessionStorage.setItem(KEY_STORAGE, k);
      } catch {
        /* ignore: the key lasts for this page only */
      }
      setSession({ key: k, me });
      return me;
    },
    [],
  );

  const restore = useCallback(async () => {
    const k = storedKey();
    if (!k) return false;
    try {
      await signIn(k);
      return true;
    } catch {
      signOut();
      return false;
    }
  }, [signIn, signOut]);

  const api = useMemo(
    () => (session ? new ApiClient({ key: session.key, onUnauthorized: signOut }) : null),
    [session, signOut],
  );

  const value = useMemo<AuthValue>(
    () => ({
      session,
      api,
      signIn,
      signOut,
      restore,
      can: (a) => (session ? roleCan(session.me.role, a) : false),
    }),
    [session, api, signIn, signOut, restore],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthValue {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside AuthProvider');
  return ctx;
}

/** The signed-in API client (pages below the layout only render when signed in). */
export function useApiClient(): ApiClient {
  const { api } = useAuth();
  if (!api) throw new Error('not signed in');
  return api;
}
