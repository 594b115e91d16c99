/**
 * D60: what the usual platforms put in their JWTs, to start an identity from, and the step that exchanges
 * the platform's JWT for a svcenv token (docs/identity.md's recipes: curl until the CLI does it, D61).
 * `<…>` marks what the Owner must fill in; the form refuses to save while one is left.
 */
export type PresetId = 'github' | 'gitlab' | 'kubernetes' | 'custom';

export interface Preset {
  id: PresetId;
  label: string;
  issuer: string;
  subject: string;
  /** Claim names offered with empty values: an empty value is not checked. */
  claims: string[];
}

export const PRESETS: Preset[] = [
  {
    id: 'github',
    label: 'GitHub Actions',
    issuer: 'https://token.actions.githubusercontent.com',
    subject: 'repo:<owner>/<repo>:*',
    claims: ['repository', 'ref', 'environment'],
  },
  {
    id: 'gitlab',
    label: 'GitLab CI',
    issuer: 'https://gitlab.com',
    subject: 'project_path:<group>/<project>:*',
    claims: ['project_path', 'ref', 'environment'],
  },
  {
    id: 'kubernetes',
    label: 'Kubernetes',
    issuer: '<the cluster issuer URL>',
    subject: 'system:serviceaccount:<namespace>:<name>',
    claims: [],
  },
  { id: 'custom', label: 'Other', issuer: '', subject: '', claims: [] },
];

/** A `<…>` placeholder left in a preset's text. */
export const hasPlaceholder = (text: string): boolean => /<[^<>]+>/.test(text);

/** Which platform an identity is for, by its issuer and subject, to pick the snippet. */
export function presetOf(i: { issuer: string; subject: string | null }): PresetId {
  if (i.issuer === 'https://token.actions.githubusercontent.com') return 'github';
  if (i.subject?.startsWith('system:serviceaccount:')) return 'kubernetes';
  if (i.subject?.startsWith('project_path:') || /gitlab/i.test(i.issuer)) return 'gitlab';
  return 'custom';
}

const exchange = (jwt: string, indent: string) =>
  `curl -sSf -X POST "$SVCENV_API_URL/v1/auth/oidc" -H 'content-type: application/json' \\\n${indent}  -d "{\\"identity\\":\\"$SVCENV_IDENTITY\\",\\"token\\":\\"${jwt}\\"}" | jq -r .token`;

/** The lines to paste into the workflow, job or pod that signs in as this identity. */
export function snippet(preset: PresetId, api: string, id: string, audience: string): string {
  switch (preset) {
    case 'github':
      return `permissions:
  id-token: write
  contents: read
steps:
  - name: svcenv token
    env:
      SVCENV_API_URL: ${api}
      SVCENV_IDENTITY: ${id}
    run: |
      jwt=$(curl -sSf -H "Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" \\
        "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=${audience}" | jq -r .value)
      token=$(${exchange('$jwt', '      ')})
      echo "::add-mask::$token"
      echo "SVCENV_TOKEN=$token" >> "$GITHUB_ENV"`;
    case 'gitlab':
      return `deploy:
  id_tokens:
    SVCENV_ID_TOKEN:
      aud: ${audience}
  variables:
    SVCENV_API_URL: ${api}
    SVCENV_IDENTITY: ${id}
  script:
    - |
      export SVCENV_TOKEN=$(${exchange('$SVCENV_ID_TOKEN', '      ')})`;
    case 'kubernetes':
      return `env:
  - name: SVCENV_API_URL
    value: ${api}
  - name: SVCENV_IDENTITY
    value: ${id}
# in the container's command:
#   export SVCENV_TOKEN=$(${exchange('$(cat /var/run/secrets/svcenv/token)', '#   ')})
volumeMounts:
  - name: svcenv-token
    mountPath: /var/run/secrets/svcenv
    readOnly: true
# and in the pod's volumes:
volumes:
  - name: svcenv-token
    projected:
      sources:
        - serviceAccountToken:
            audience: ${audience}
            expirationSeconds: 3600
            path: token`;
    default:
      return `export SVCENV_API_URL=${api} SVCENV_IDENTITY=${id}
# SVCENV_JWT: the platform's JWT, issued for the audience ${audience}
export SVCENV_TOKEN=$(${exchange('$SVCENV_JWT', '')})`;
  }
}
