import type { SessionUser } from '@svcenv/contract';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

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
