import { MASK } from '@svcenv/contract/constants';

/** How a masked value reads on screen: dots, never the wire's placeholder. */
export const DOTS = '••••••••';

export const isMasked = (value: string): boolean => value === MASK;

/** A value as it is shown: dots when the server masked it. */
export const displayValue = (value: string): string => (isMasked(value) ? DOTS : value);
