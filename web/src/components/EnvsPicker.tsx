/** The environments a token or an identity reaches: every one (`["*"]`, D31), or some by name. */
export function EnvsPicker({
  envs,
  onEnvs,
  choices,
}: {
  envs: string[];
  onEnvs: (envs: string[]) => void;
  choices: string[];
}) {
  const toggle = (e: string) => {
    const rest = envs.filter((x) => x !== '*');
    onEnvs(rest.includes(e) ? rest.filter((x) => x !== e) : [...rest, e]);
  };
  return (
    <fieldset class="fieldset">
      <legend>Environments</legend>
      <label class="check">
        <input type="checkbox" checked={envs.includes('*')} onChange={() => onEnvs(envs.includes('*') ? [] : ['*'])} />
        Every environment
      </label>
      {!envs.includes('*') &&
        choices.map((e) => (
          <label key={e} class="check">
            <input type="checkbox" checked={envs.includes(e)} onChange={() => toggle(e)} />
            {e}
          </label>
        ))}
    </fieldset>
  );
}
