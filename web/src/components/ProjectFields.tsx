import { Field } from '../ui.js';
import { ColorPicker } from './ColorPicker.js';

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
      <Field label="Name" name="name" error={error}>
        <input
          class="input"
          name="name"
          value={draft.name}
          onInput={(e) => onChange({ name: e.currentTarget.value })}
          required
          autofocus
        />
      </Field>
      <Field label="Description" name="desc" error={error} hint={descHint}>
        <input
          class="input"
          name="desc"
          value={draft.desc}
          onInput={(e) => onChange({ desc: e.currentTarget.value })}
        />
      </Field>
      <Field label="Colour" name="color" error={error}>
        <ColorPicker value={draft.color} onChange={(color) => onChange({ color })} />
      </Field>
    </>
  );
}
