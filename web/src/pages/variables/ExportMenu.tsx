import { useState } from 'preact/hooks';
import { exportVars } from '../../api/variables.js';
import { download } from '../../lib/download.js';
import { useAction } from '../../toast.js';
import { Button } from '../../ui.js';

/**
 * The export formats of one environment, as files the server renders. Exporting values needs write, like
 * revealing them; with read only the masked file is offered.
 */
export function ExportMenu({ projectId, env, withValues }: { projectId: string; env: string; withValues: boolean }) {
  const act = useAction();
  const [open, setOpen] = useState(false);
  const exportAs = (format: 'dotenv' | 'k8s', reveal: boolean) => {
    setOpen(false);
    return act(async () => {
      const { blob, filename } = await exportVars(projectId, env, format, reveal);
      download(blob, filename);
    });
  };
  return (
    <div class="dropdown">
      <Button size="sm" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>
        Export ▾
      </Button>
      {open && (
        <div class="menu menu-right" role="menu" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          {withValues && (
            <>
              <button type="button" role="menuitem" class="menu-item" onClick={() => exportAs('dotenv', true)}>
                .env (values)
              </button>
              <button type="button" role="menuitem" class="menu-item" onClick={() => exportAs('k8s', true)}>
                Kubernetes Secret (values)
              </button>
            </>
          )}
          <button type="button" role="menuitem" class="menu-item" onClick={() => exportAs('dotenv', false)}>
            .env (secrets masked)
          </button>
        </div>
      )}
    </div>
  );
}
