/**
 * D73 temporary grants on the screens that grant them (Team, project Members): the time left with the exact
 * end in a title, the duration choice for a new grant, and the extend / end controls of a temporary one.
 */
import { useState } from 'preact/hooks';
import { dateTime } from '../lib/format.js';
import { DAY, GRANT_CHOICES, type GrantChoice, HOUR, timeLeft } from '../lib/grants.js';
import { Button, Confirm } from '../ui.js';

/** "ends in 3 h", the exact time in its title; nothing for a permanent grant. */
export function TimeLeft({ expiresAt }: { expiresAt: string | null | undefined }) {
  if (!expiresAt) return null;
  const t = timeLeft(expiresAt);
  return (
    <span
      class={`time-left ${t.soon ? 'time-left-soon' : ''}`}
      title={`Ends ${dateTime(expiresAt)}`}
      data-testid="time-left"
    >
      {t.label}
    </span>
  );
}

/**
 * How long a new grant lasts: permanent, 1 hour, 1 day, 7 days, or a custom number of hours. `onSeconds`
 * gets null for permanent.
 */
export function DurationSelect({
  label = 'Grant for',
  onSeconds,
}: {
  label?: string;
  onSeconds: (seconds: number | null) => void;
}) {
  const [choice, setChoice] = useState<GrantChoice>('permanent');
  const [hours, setHours] = useState('4');
  const pick = (c: GrantChoice, h = hours) => {
    setChoice(c);
    if (c === 'custom') {
      const n = Number(h);
      onSeconds(Number.isFinite(n) && n > 0 ? Math.round(n * HOUR) : null);
    } else onSeconds(GRANT_CHOICES.find((g) => g.value === c)?.seconds ?? null);
  };
  return (
    <span class="duration-select">
      <label class="duration-label">
        <span>{label}</span>
        <select
          class="input input-sm"
          aria-label={label}
          value={choice}
          onChange={(e) => pick(e.currentTarget.value as GrantChoice)}
        >
          {GRANT_CHOICES.map((g) => (
            <option key={g.value} value={g.value}>
              {g.label}
            </option>
          ))}
        </select>
      </label>
      {choice === 'custom' && (
        <label class="duration-label">
          <input
            class="input input-sm duration-hours"
            type="number"
            min="0.1"
            step="any"
            aria-label="Hours"
            value={hours}
            onInput={(e) => {
              setHours(e.currentTarget.value);
              pick('custom', e.currentTarget.value);
            }}
          />
          <span>hours</span>
        </label>
      )}
    </span>
  );
}

/**
 * A temporary grant's time left, with +1 h / +1 day and End (confirmed) for those who may change it.
 * `what` names the grant in the confirmation ("Dev's write on prod").
 */
export function TemporaryGrant({
  expiresAt,
  canChange,
  what,
  endNote,
  onExtend,
  onEnd,
}: {
  expiresAt: string | null | undefined;
  canChange: boolean;
  what: string;
  /** What ending it means, in the confirmation. */
  endNote: string;
  onExtend: (seconds: number) => Promise<void>;
  onEnd: () => Promise<void>;
}) {
  const [ending, setEnding] = useState(false);
  if (!expiresAt) return null;
  return (
    <span class="temp-grant">
      <TimeLeft expiresAt={expiresAt} />
      {canChange && (
        <span class="temp-grant-actions">
          <Button size="sm" variant="ghost" aria-label={`Extend ${what} by 1 hour`} onClick={() => onExtend(HOUR)}>
            +1 h
          </Button>
          <Button size="sm" variant="ghost" aria-label={`Extend ${what} by 1 day`} onClick={() => onExtend(DAY)}>
            +1 day
          </Button>
          <Button
            size="sm"
            variant="ghost"
            class="danger-text"
            aria-label={`End ${what} now`}
            onClick={() => setEnding(true)}
          >
            End
          </Button>
        </span>
      )}
      {ending && (
        <Confirm
          title={`End ${what} now?`}
          action="End now"
          body={<p>{endNote}</p>}
          onClose={() => setEnding(false)}
          onConfirm={async () => {
            await onEnd();
            setEnding(false);
          }}
        />
      )}
    </span>
  );
}
