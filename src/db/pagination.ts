/**
 * One page of rows fetched newest first with `limit + 1`: the extra row only tells that more exist.
 * The cursor is the last id on the page; TypeIDs sort by creation time.
 */
export function toPage<Row extends { id: string }>(rows: Row[], limit: number) {
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit);
  return { data, hasMore, nextCursor: hasMore ? data[data.length - 1].id : null };
}
