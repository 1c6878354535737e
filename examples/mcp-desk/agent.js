// @ts-check
// The desk's agent, written the LangChain way: createAgent over tools an MCP server describes.
// tollgate reads each tool's MCP hints: lookup_order (readOnlyHint) runs at once, refund_order
// (destructive) waits for a person, runs only once approved, and at most once.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { defineTool } from "tollgate";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Starts the desk's MCP server (a child process on stdio) and loads its tools. With no kind given,
 * `defineTool` takes each tool's from its MCP hints; give one (`defineTool(t, { kind })`) to overrule them.
 * @param {{ refundsFile?: string }} [o] where the server records refunds
 */
export async function deskTools(o = {}) {
  const client = new MultiServerMCPClient({
    mcpServers: {
      desk: {
        transport: "stdio",
        command: process.execPath,
        args: [path.join(HERE, "mcp-server.js")],
        env: { PATH: process.env.PATH ?? "", ...(o.refundsFile ? { REFUNDS_FILE: o.refundsFile } : {}) },
      },
    },
  });
  const tools = (await client.getTools()).map((t) => defineTool(t, t.name === "lookup_order" ? { sensitiveOutput: ["customer_email"] } : {}));
  return { client, tools };
}

/**
 * The agent, as LangChain builds it: a person is asked about every tool that waits at tollgate's gate.
 * @param {{ model: import("@langchain/core/language_models/chat_models").BaseChatModel, tools: import("tollgate").TollgateTool[] }} o
 */
export function deskAgent({ model, tools }) {
  const interruptOn = Object.fromEntries(tools.filter((t) => t.kind === "irreversible").map((t) => [t.name, true]));
  return createAgent({
    model,
    tools,
    systemPrompt: "You run an order desk. Refunds wait for a person's approval.",
    middleware: [humanInTheLoopMiddleware({ interruptOn })],
  });
}
