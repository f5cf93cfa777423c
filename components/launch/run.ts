/** Mounts the launch log pane (placeholder until the launch issue lands). */
export async function runLogPane(_opts: unknown): Promise<number> {
  return 2;
}
