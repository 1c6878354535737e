/** Another decision on the same interrupt landed since it was read: take the request again. */
export class ProgressConflict extends Error {
  constructor() {
    super("another decision on this interrupt landed at the same time");
    this.name = "ProgressConflict";
  }
}
