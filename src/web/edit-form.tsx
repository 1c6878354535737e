import { useState, type FormEvent } from "react";
import type { PendingCall } from "../protocol/index.js";

/** The part of a JSON Schema property the form understands. */
interface PropertySchema {
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
}

const MASK = "***";

/**
 * Edit-before-approve: one input per argument of the tool's schema, filled with the call's
 * values. A masked value starts empty and stays as it is unless something is typed; only fields
 * that changed are sent as `edited_args` (the server merges them and checks the result).
 */
export function EditForm({
  call,
  disabled,
  onSubmit,
  onApprove,
  onCancel,
}: {
  call: PendingCall;
  disabled: boolean;
  onSubmit(edited: Record<string, unknown>): void;
  onApprove(): void;
  onCancel(): void;
}) {
  const properties = ((call.args_schema as { properties?: Record<string, PropertySchema> }).properties ?? {}) as Record<string, PropertySchema>;
  const initial = Object.fromEntries(Object.keys(properties).map((k) => [k, startValue(call.args[k])]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [problem, setProblem] = useState<string | null>(null);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const edited: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(properties)) {
      const text = values[key] ?? "";
      if (text === initial[key]) continue;
      if (call.args[key] === MASK && text === "") continue; // a masked field left empty keeps its value
      const parsed = parseValue(text, schema);
      if (!parsed.ok) {
        setProblem(`${key}: ${parsed.why}`);
        return;
      }
      edited[key] = parsed.value;
    }
    setProblem(null);
    if (Object.keys(edited).length === 0) onApprove();
    else onSubmit(edited);
  };

  return (
    <form className="edit-form" onSubmit={submit}>
      {Object.entries(properties).map(([key, schema]) => {
        const id = `edit-${call.call_id}-${key}`;
        const kind = typeOf(schema);
        return (
          <div className="field" key={key}>
            <label htmlFor={id}>{key}</label>
            <input
              id={id}
              type={kind === "integer" || kind === "number" ? "number" : schema.format === "email" ? "email" : "text"}
              step={kind === "integer" ? 1 : kind === "number" ? "any" : undefined}
              value={values[key] ?? ""}
              placeholder={call.args[key] === MASK ? "unchanged (masked)" : undefined}
              onChange={(e) => setValues({ ...values, [key]: e.target.value })}
              aria-describedby={schema.description ? `${id}-help` : undefined}
            />
            {schema.description ? (
              <small id={`${id}-help`} className="muted">
                {schema.description}
              </small>
            ) : null}
          </div>
        );
      })}
      {problem ? (
        <p role="alert" className="error">
          {problem}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={disabled}>
          Approve with edits
        </button>
        <button type="button" onClick={onCancel}>
          Cancel edit
        </button>
      </div>
    </form>
  );
}

function typeOf(schema: PropertySchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
}

function startValue(value: unknown): string {
  if (value === undefined || value === MASK) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function parseValue(text: string, schema: PropertySchema): { ok: true; value: unknown } | { ok: false; why: string } {
  const kind = typeOf(schema);
  if (kind === "integer" || kind === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n)) return { ok: false, why: "a number is needed" };
    if (kind === "integer" && !Number.isInteger(n)) return { ok: false, why: "a whole number is needed" };
    return { ok: true, value: n };
  }
  if (kind === "boolean") return text === "true" || text === "false" ? { ok: true, value: text === "true" } : { ok: false, why: "true or false" };
  if (kind === "string" || kind === undefined) return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, why: "JSON is needed" };
  }
}
