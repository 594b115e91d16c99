import type { ComponentChildren } from 'preact';
import { Button, Modal, OnceSecret } from '../ui.js';

/** The dialog that shows a new secret once (a token, a webhook's signing secret) until it is saved. */
export function OnceSecretDialog({
  title,
  value,
  note,
  onClose,
  children,
}: {
  title: string;
  value: string;
  note: string;
  onClose: () => void;
  /** Shown under the secret: how to use it. */
  children?: ComponentChildren;
}) {
  return (
    <Modal
      title={title}
      onClose={onClose}
      footer={
        <Button variant="primary" onClick={onClose}>
          I have saved it
        </Button>
      }
    >
      <OnceSecret value={value} note={note} />
      {children}
    </Modal>
  );
}
