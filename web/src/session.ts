import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionUser } from './types.js';

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
