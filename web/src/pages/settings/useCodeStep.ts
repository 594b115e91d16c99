import { useState } from 'preact/hooks';
import { useSubmit } from '../../hooks.js';

/**
 * The code typed for a two-factor step (turning it on or off, new backup codes), and the step's submit:
 * the code is cleared once the step succeeds.
 */
export function useCodeStep() {
  const [code, setCode] = useState('');
  const { busy, error, setError, submit } = useSubmit();
  const withCode = (fn: () => Promise<void>) =>
    submit(async () => {
      await fn();
      setCode('');
    });
  return { code, setCode, busy, error, setError, withCode };
}
