/**
 * The small building blocks of the management pages: a modal dialog (native <dialog>: focus moves into it, the page
 * behind is inert, Escape closes it, and focus goes back to the button that opened it), a form in a dialog that shows
 * the gateway's refusal, a delete button that asks first, a JSON field checked as one types, and a list loader.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Page } from './api.ts';
import { BASE, navigate } from './nav.ts';

export const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** A list from the API, fetched only when `path` is set (a page without the scope passes null), and reloadable. */
export function useList<T>(path: string | null): { rows: T[] | null; error: string | null; reload: () => void } {
  const [rows, setRows] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!path) return;
    setError(null);
    api<Page<T>>('GET', path)
      .then((p) => setRows(p.data))
      .catch((e) => setError(message(e)));
  }, [path, tick]);
  return { rows, error, reload: () => setTick((t) => t + 1) };
}

export function Alert({ text }: { text: string | null }) {
  return text ? (
    <p role="alert" class="error">
      {text}
    </p>
  ) : null;
}

let dialogs = 0;

/** A modal dialog, open while rendered. */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [id] = useState(() => `dialog-${++dialogs}`);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const dialog = ref.current!;
    dialog.showModal();
    // The page behind a modal dialog is inert: close it before giving the focus back.
    return () => {
      dialog.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={id}>{title}</h2>
      {children}
    </dialog>
  );
}

/** A form in a dialog: submitting runs `onSubmit`; a refusal stays on the form (role=alert), success closes it. */
export function FormDialog(props: { title: string; submit: string; onSubmit: () => Promise<void>; onClose: () => void; children: ComponentChildren }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            await props.onSubmit();
            props.onClose();
          } catch (err) {
            setError(message(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        {props.children}
        <Alert text={error} />
        <div class="row buttons">
          <button type="submit" disabled={busy}>
            {props.submit}
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A button that opens a dialog (its `children` get the close function). */
export function Opener({ label, aria, children }: { label: string; aria?: string; children: (close: () => void) => ComponentChildren }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" aria-label={aria} onClick={() => setOpen(true)}>
        {label}
      </button>
      {open && children(() => setOpen(false))}
    </>
  );
}

/** Delete, after a confirmation naming what goes. */
export function DeleteButton({ what, onDelete }: { what: string; onDelete: () => Promise<void> }) {
  return (
    <Opener label="Delete" aria={`Delete ${what}`}>
      {(close) => (
        <FormDialog title={`Delete ${what}?`} submit="Delete" onSubmit={onDelete} onClose={close}>
          <p>This cannot be undone.</p>
        </FormDialog>
      )}
    </Opener>
  );
}

let fields = 0;

/** A JSON text area: a syntax error is shown as one types (the gateway checks the rest when the form is sent). */
export function JsonField({ label, value, onInput, rows = 8, hint }: { label: string; value: string; onInput: (v: string) => void; rows?: number; hint?: string }) {
  const [id] = useState(() => `json-${++fields}`);
  let problem: string | null = null;
  try {
    JSON.parse(value);
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  return (
    <>
      <label>
        {label}
        <textarea class="code" rows={rows} spellcheck={false} value={value} aria-invalid={problem !== null} aria-describedby={`${id}-check`} onInput={(e) => onInput(e.currentTarget.value)} />
      </label>
      <span id={`${id}-check`} class={problem ? 'error' : 'hint'} aria-live="polite">
        {problem ? `JSON: ${problem}` : (hint ?? '')}
      </span>
    </>
  );
}

/** A text input bound to a state pair. */
export function Field(props: { label: string; value: string; onInput: (v: string) => void; required?: boolean; type?: string; hint?: string; list?: string; autocomplete?: string }) {
  const [id] = useState(() => `field-${++fields}`);
  return (
    <>
      <label>
        {props.label}
        <input
          type={props.type ?? 'text'}
          required={props.required}
          value={props.value}
          list={props.list}
          autocomplete={props.autocomplete}
          aria-describedby={props.hint ? `${id}-hint` : undefined}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      </label>
      {props.hint && (
        <span id={`${id}-hint`} class="hint">
          {props.hint}
        </span>
      )}
    </>
  );
}

/** A column of a table: its header and its cell. */
export type Column<T> = [label: string, cell: (row: T) => ComponentChildren];

/** A table of rows with an optional last column of actions. */
export function DataTable<T extends { id?: unknown }>({ caption, rows, columns, actions }: { caption: string; rows: T[]; columns: Column<T>[]; actions?: (row: T) => ComponentChildren }) {
  if (rows.length === 0) return <p>None.</p>;
  return (
    <div class="scroll">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map(([label]) => (
              <th key={label} scope="col">
                {label}
              </th>
            ))}
            {actions && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={String(row.id ?? i)}>
              {columns.map(([label, cell]) => (
                <td key={label}>{cell(row)}</td>
              ))}
              {actions && <td class="actions">{actions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Parses a JSON field's text (the form's submit refuses it with the parser's message). */
export function parseJson(label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${label}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A link inside the console (no page load). */
export function Link({ to, children, label }: { to: string; children: ComponentChildren; label?: string }) {
  return (
    <a
      href={BASE + to}
      aria-label={label}
      onClick={(e) => {
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
