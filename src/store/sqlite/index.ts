export { openSqliteStore, type SqliteStore } from "./sqlite-store.js";
export { openDatabase, type Db } from "./database.js";
export { TollgateSaver } from "./checkpointer.js";
