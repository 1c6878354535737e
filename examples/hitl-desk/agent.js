// @ts-check
// An account desk written the LangChain way: createAgent with humanInTheLoopMiddleware. tollgate
// serves it as it is; the middleware's interrupts become tollgate's gate (four eyes, expiry,
// audit, exactly once), and the tools, made with defineTool, refuse to run without an approval.
import { tool } from "@langchain/core/tools";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { defineTool, toolContext } from "tollgate";
import { z } from "zod";

/** A stand-in for your account system. */
const ACCOUNTS = new Map([["AC-1", { account_id: "AC-1", owner_email: "ada@example.com", balance_cents: 9_000 }]]);

/**
 * The desk's tools, over a log of what they did (your payment and account APIs).
 * @param {Array<object>} done what ran, in order
 */
export function deskTools(done = []) {
  const lookupAccount = tool(
    async ({ account_id }) => {
      const account = ACCOUNTS.get(account_id);
      if (!account) throw new Error(`No account ${account_id}`);
      return JSON.stringify(account);
    },
    { name: "lookup_account", description: "An account by id (e.g. AC-1).", schema: z.object({ account_id: z.string() }) },
  );
  const issueRefund = tool(
    async ({ account_id, amount_cents }, config) => {
      done.push({ refund: account_id, amount_cents, key: toolContext(config).idempotencyKey });
      return `Refunded ${amount_cents} cents to ${account_id}`;
    },
    { name: "issue_refund", description: "Refund money to an account. Irreversible.", schema: z.object({ account_id: z.string(), amount_cents: z.number().int().positive() }) },
  );
  const closeAccount = tool(
    async ({ account_id }, config) => {
      done.push({ closed: account_id, key: toolContext(config).idempotencyKey });
      return `Closed ${account_id}`;
    },
    { name: "close_account", description: "Close an account. Irreversible.", schema: z.object({ account_id: z.string() }) },
  );
  return [
    defineTool(lookupAccount, { kind: "read", sensitiveOutput: ["owner_email"] }),
    // Four eyes on money; the approver may lower the amount.
    defineTool(issueRefund, { kind: "irreversible", policy: "approver", editable: true }),
    defineTool(closeAccount, { kind: "irreversible" }),
  ];
}

/**
 * The agent, as LangChain builds it.
 * @param {{ model: import("@langchain/core/language_models/chat_models").BaseChatModel, tools: import("tollgate").TollgateTool[] }} o
 */
export function deskAgent({ model, tools }) {
  return createAgent({
    model,
    tools,
    systemPrompt: "You run an account desk. Refunds and closures wait for a person's approval.",
    middleware: [humanInTheLoopMiddleware({ interruptOn: { issue_refund: true, close_account: { allowedDecisions: ["approve", "reject"] } } })],
  });
}
