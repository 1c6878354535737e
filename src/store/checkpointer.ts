import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { Db } from "./database.js";

/**
 * LangGraph's SQLite checkpointer on tollgate's own connection, with its tables created at once
 * (SqliteSaver makes them lazily, at its first use) so the whole schema exists from start-up.
 */
export class TollgateSaver extends SqliteSaver {
  constructor(db: Db) {
    super(db);
    this.setup();
  }
}
