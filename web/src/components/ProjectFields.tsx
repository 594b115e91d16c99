import { Field } from '../ui.js';
import { ColorPicker } from './ColorPicker.js';
import { NameField, TextField } from './TextField.js';

export interface ProjectDraft {
  name: string;
  desc: string;
  color: string;
}

/** Name, description and colour of a project: the fields that creating and editing one share. */
export function ProjectFields({
  draft,
  onChange,
  error,
  descHint,
}: {
  draft: ProjectDraft;
  /** Called with the changed field only; the caller merges it into its draft. */
  onChange: (patch: Partial<ProjectDraft>) => void;
  error: unknown;
  descHint?: string;
}) {
  return (
    <>
      <NameField value={draft.name} onValue={(name) => onChange({ name })} error={error} required autofocus />
      <TextField
        label="Description"
        name="desc"
        hint={descHint}
        value={draft.desc}
        onValue={(desc) => onChange({ desc })}
        error={error}
      />
      <Field label="Colour" name="color" error={error}>
        <ColorPicker value={draft.color} onChange={(color) => onChange({ color })} />
      </Field>
    </>
  );
}
