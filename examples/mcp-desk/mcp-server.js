// @ts-check
// An order desk as an MCP server on stdio (your ticketing or payments system's MCP server). Its
// annotations tell clients what each tool does: lookup_order only reads, refund_order moves money.
// Each refund is appended to REFUNDS_FILE, so you can see what really ran.
import fs from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const REFUNDS_FILE = process.env.REFUNDS_FILE ?? "refunds.jsonl";

/** A stand-in for your order system. */
const ORDERS = new Map([["A-1", { order_id: "A-1", status: "shipped", total_cents: 4_200, customer_email: "ada@example.com" }]]);

const server = new McpServer({ name: "order-desk", version: "1.0.0" });

server.registerTool(
  "lookup_order",
  { description: "An order by id (e.g. A-1).", inputSchema: { order_id: z.string() }, annotations: { readOnlyHint: true } },
  async ({ order_id }) => {
    const order = ORDERS.get(order_id);
    if (!order) return { isError: true, content: [{ type: "text", text: `No order ${order_id}` }] };
    return { content: [{ type: "text", text: JSON.stringify(order) }], structuredContent: order };
  },
);

server.registerTool(
  "refund_order",
  {
    description: "Refund part of an order. Irreversible.",
    inputSchema: { order_id: z.string(), amount_cents: z.number().int().positive() },
    annotations: { destructiveHint: true },
  },
  async ({ order_id, amount_cents }, extra) => {
    // MCP has no idempotency key of its own: a real server would take one in the arguments or _meta.
    fs.appendFileSync(REFUNDS_FILE, `${JSON.stringify({ order_id, amount_cents, request: String(extra.requestId) })}\n`);
    return { content: [{ type: "text", text: `Refunded ${amount_cents} cents on ${order_id}` }] };
  },
);

await server.connect(new StdioServerTransport());
