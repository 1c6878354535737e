import { useState } from "react";
import type { Decision, PendingCall } from "../protocol/index.js";
import { policyInWords, waitingInWords } from "../react/index.js";
import { ArgsList } from "./args-list.js";
import { EditForm } from "./edit-form.js";
import { formatLeft, useCountdown } from "./use-countdown.js";

interface ApprovalCardProps {
  call: PendingCall;
  expiresAt: string;
  serverNow(): number;
  /** Whether this person may decide (the server's inbox lists the interrupt for them). */
  canDecide: boolean;
  /** It has waited past its escalation time. */
  escalated: boolean;
  /** This call's decision, when taken while other calls still wait for theirs. */
  draft: Decision | undefined;
  submitting: boolean;
  onApprove(): void;
  onReject(reason: string): void;
  onEdit(args: Record<string, unknown>): void;
}


/** One call at the gate: what it would do, who must decide, how long is left, and the decision. */
export function ApprovalCard(props: ApprovalCardProps) {
  const { call, canDecide, draft, submitting } = props;
  const left = useCountdown(props.expiresAt, props.serverNow);
  const expired = left === 0;
  const [mode, setMode] = useState<"buttons" | "reject" | "edit">("buttons");
  const [reason, setReason] = useState("");
  const headingId = `approval-${call.call_id}`;

  return (
    <section className={`approval-card${expired ? " expired" : ""}`} data-testid="approval-card" data-call-id={call.call_id} data-expired={expired ? "true" : undefined} aria-labelledby={headingId}>
      <h3 id={headingId} aria-label={`Approval needed: ${call.name}`}>
        Approval needed: <span className="tool-name">{call.name}</span>
        {props.escalated ? (
          <span className="badge escalated" data-testid="card-escalated">
            escalated
          </span>
        ) : null}
      </h3>
      <ArgsList args={call.args} />
      {call.preview !== undefined ? (
        <div className="preview" data-testid="preview">
          <h4>What it would act on</h4>
          {call.preview && typeof call.preview === "object" && !Array.isArray(call.preview) ? <ArgsList args={call.preview as Record<string, unknown>} /> : <pre>{JSON.stringify(call.preview)}</pre>}
        </div>
      ) : call.preview_error ? (
        <p className="preview-error" data-testid="preview-error">
          Preview unavailable: {call.preview_error}
        </p>
      ) : null}
      <p className="policy" data-testid="policy">
        {policyInWords(call)}
      </p>
      <p className="countdown" data-testid="countdown" aria-live="off">
        {expired ? "Expired" : `Expires in ${formatLeft(left)}`}
      </p>
      {expired ? null : !canDecide ? (
        <p className="waiting" data-testid="waiting-for">
          {waitingInWords(call)}
        </p>
      ) : draft ? (
        <p className="muted">{draft.approved ? "Approved" : "Rejected"}; waiting for the other calls' decisions.</p>
      ) : mode === "reject" ? (
        <form
          className="reject-form"
          onSubmit={(e) => {
            e.preventDefault();
            props.onReject(reason.trim());
          }}
        >
          <label htmlFor={`reason-${call.call_id}`}>Reason</label>
          <input id={`reason-${call.call_id}`} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} autoFocus />
          <div className="actions">
            <button type="submit" className="danger" disabled={submitting}>
              Confirm reject
            </button>
            <button type="button" onClick={() => setMode("buttons")}>
              Back
            </button>
          </div>
        </form>
      ) : mode === "edit" ? (
        <EditForm call={call} disabled={submitting} onSubmit={props.onEdit} onApprove={props.onApprove} onCancel={() => setMode("buttons")} />
      ) : (
        <div className="actions">
          <button type="button" className="primary" onClick={props.onApprove} disabled={submitting}>
            Approve
          </button>
          <button type="button" className="danger" onClick={() => setMode("reject")} disabled={submitting}>
            Reject
          </button>
          {call.editable ? (
            <button type="button" onClick={() => setMode("edit")} disabled={submitting}>
              Edit
            </button>
          ) : null}
        </div>
      )}
    </section>
  );
}
