import type { SessionUser } from '@svcenv/contract';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { setToken } from './api.js';
import { navigate } from './router.js';

export interface Session {
  user: SessionUser;
  /** Re-reads the session (after a rename, a workspace switch, a verified email). */
  refresh: () => Promise<void>;
}
export const SessionCtx = createContext<Session | null>(null);
export function useSession(): Session {
  const s = useContext(SessionCtx);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}
export const isOwner = (u: SessionUser) => u.wsRole === 'Owner';

/** Drops this tab's session and goes to the login page: logging out, or a change that ended every session (D9). */
export function toLogin(): void {
  setToken(null);
  navigate('/login', true);
}
