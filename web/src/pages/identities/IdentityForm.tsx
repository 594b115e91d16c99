import type { Identity, Project } from '@svcenv/contract';
import { IDENTITY_TTL } from '@svcenv/contract/constants';
import { useState } from 'preact/hooks';
import { createIdentity, updateIdentity } from '../../api/identities.js';
import { ApiError } from '../../api.js';
import { CidrField } from '../../components/CidrField.js';
import { ProjectEnvsPicker } from '../../components/EnvsPicker.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField, TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { parseCidrList } from '../../lib/cidrs.js';
import { Button, Field } from '../../ui.js';
import { hasPlaceholder, PRESETS, type PresetId } from './presets.js';

type Claim = { name: string; value: string };

const invalid = (field: string, message: string) => new ApiError(400, 'VALIDATION_ERROR', message, field);

/**
 * D60: a new identity (started from a platform's preset) or an existing one's settings: who may sign in
 * (issuer, audience, subject and claim patterns) and what the issued token may do (scope, project,
 * environments, lifetime, D62's ranges).
 */
export function IdentityForm({
  identity,
  projects,
  onClose,
  onSaved,
}: {
  identity?: Identity;
  projects: Project[];
  onClose: () => void;
  onSaved: (i: Identity) => void;
}) {
  const [preset, setPreset] = useState<PresetId>('github');
  const [name, setName] = useState(identity?.name ?? '');
  const [issuer, setIssuer] = useState(identity?.issuer ?? PRESETS[0]!.issuer);
  const [audience, setAudience] = useState(identity?.audience ?? location.origin);
  const [subject, setSubject] = useState(identity ? (identity.subject ?? '') : PRESETS[0]!.subject);
  const [claims, setClaims] = useState<Claim[]>(
    identity
      ? Object.entries(identity.claims).map(([n, value]) => ({ name: n, value }))
      : PRESETS[0]!.claims.map((n) => ({ name: n, value: '' })),
  );
  const [scope, setScope] = useState<'read' | 'write'>(identity?.scope ?? 'read');
  const [projectId, setProjectId] = useState(identity?.projectId ?? '');
  const [envs, setEnvs] = useState<string[]>(identity?.envs ?? ['*']);
  const [ttl, setTtl] = useState(String(identity?.ttlSeconds ?? IDENTITY_TTL.default));
  const [cidrs, setCidrs] = useState((identity?.trustedCidrs ?? []).join('\n'));
  const { busy, error, submit } = useSubmit();
  const trusted = parseCidrList(cidrs);
  const choose = (id: PresetId) => {
    const p = PRESETS.find((x) => x.id === id)!;
    setPreset(id);
    setIssuer(p.issuer);
    setSubject(p.subject);
    setClaims(p.claims.map((n) => ({ name: n, value: '' })));
  };
  const setClaim = (i: number, c: Partial<Claim>) => setClaims(claims.map((x, j) => (j === i ? { ...x, ...c } : x)));

  const save = async () => {
    // An empty claim value checks nothing: a preset's unused rows are simply left out.
    const kept = claims.filter((c) => c.name.trim() && c.value.trim());
    if (hasPlaceholder(issuer)) throw invalid('issuer', 'replace the <…> part with your issuer URL');
    if (hasPlaceholder(subject)) throw invalid('subject', 'replace the <…> parts of the subject');
    const placeholderClaim = kept.find((c) => hasPlaceholder(c.value));
    if (placeholderClaim) throw invalid('claims', `replace the <…> part of ${placeholderClaim.name}`);
    const body = {
      name,
      issuer,
      audience,
      subject: subject.trim() || null,
      claims: Object.fromEntries(kept.map((c) => [c.name.trim(), c.value.trim()])),
      scope,
      projectId: projectId || null,
      envs,
      ttlSeconds: Number(ttl),
      trustedCidrs: trusted.list ?? [],
    };
    onSaved(identity ? await updateIdentity(identity.id, body) : await createIdentity(body));
  };

  return (
    <ModalForm
      title={identity ? `Edit ${identity.name}` : 'New identity'}
      onClose={onClose}
      onSubmit={submit(save)}
      busy={busy}
      error={error}
      fields={['name', 'issuer', 'audience', 'subject', 'claims', 'scope', 'projectId', 'ttlSeconds', 'trustedCidrs']}
      submitLabel={identity ? 'Save' : 'Create identity'}
      disabled={envs.length === 0 || trusted.error !== undefined}
    >
      {!identity && (
        // Not a <Field>: a <label> would name its first button after itself.
        <fieldset class="fieldset">
          <legend>Platform</legend>
          <div class="seg identity-presets" data-testid="identity-preset">
            {PRESETS.map((p) => (
              <button type="button" key={p.id} aria-pressed={preset === p.id} onClick={() => choose(p.id)}>
                {p.label}
              </button>
            ))}
          </div>
        </fieldset>
      )}
      <NameField hint="e.g. payments-deploy" value={name} onValue={setName} error={error} required autofocus />
      <TextField
        label="Issuer"
        name="issuer"
        type="url"
        value={issuer}
        onValue={setIssuer}
        error={error}
        hint={
          preset === 'kubernetes' && !identity
            ? 'kubectl get --raw /.well-known/openid-configuration shows it.'
            : 'The https URL in the JWT’s iss.'
        }
        required
      />
      <TextField
        label="Audience"
        name="audience"
        value={audience}
        onValue={setAudience}
        error={error}
        hint="The aud the job asks its platform for; this server’s URL is a good choice."
        required
      />
      <TextField
        label="Subject"
        name="subject"
        value={subject}
        onValue={setSubject}
        error={error}
        hint="The JWT’s sub; * matches any run of characters. Empty: any subject."
      />
      <fieldset class="fieldset identity-claims" data-testid="identity-claims">
        <legend>Claims (optional)</legend>
        <p class="muted small">
          Other claims the JWT must have; * matches any run of characters, an empty value is not checked.
        </p>
        {claims.map((c, i) => (
          <div class="claim-row" key={i}>
            <input
              class="input"
              aria-label={`Claim ${i + 1} name`}
              placeholder="claim"
              value={c.name}
              onInput={(e) => setClaim(i, { name: e.currentTarget.value })}
            />
            <input
              class="input"
              aria-label={c.name ? `${c.name} value` : `Claim ${i + 1} value`}
              placeholder="value"
              value={c.value}
              onInput={(e) => setClaim(i, { value: e.currentTarget.value })}
            />
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Remove claim ${c.name || i + 1}`}
              onClick={() => setClaims(claims.filter((_, j) => j !== i))}
            >
              Remove
            </Button>
          </div>
        ))}
        <div>
          <Button size="sm" onClick={() => setClaims([...claims, { name: '', value: '' }])}>
            Add claim
          </Button>
        </div>
      </fieldset>
      <Field label="Scope" name="scope" error={error}>
        <fieldset class="seg">
          <legend class="sr-only">Scope</legend>
          {(['read', 'write'] as const).map((s) => (
            <button type="button" key={s} aria-pressed={scope === s} onClick={() => setScope(s)}>
              {s}
            </button>
          ))}
        </fieldset>
      </Field>
      <ProjectEnvsPicker
        projects={projects}
        projectId={projectId}
        onProjectId={setProjectId}
        envs={envs}
        onEnvs={setEnvs}
        error={error}
      />
      <Field
        label="Token lifetime (seconds)"
        name="ttlSeconds"
        error={error}
        hint={`${IDENTITY_TTL.min} to ${IDENTITY_TTL.max} (12 hours).`}
      >
        <input
          class="input"
          type="number"
          name="ttlSeconds"
          min={IDENTITY_TTL.min}
          max={IDENTITY_TTL.max}
          value={ttl}
          onInput={(e) => setTtl(e.currentTarget.value)}
          required
        />
      </Field>
      <CidrField value={cidrs} onValue={setCidrs} error={error} />
    </ModalForm>
  );
}
