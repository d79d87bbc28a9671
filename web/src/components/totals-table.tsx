import type { ComponentChildren } from 'preact';

/** A column of a totals table: its heading, the label of its cells when the rows stack on a phone (the heading unless set), its cell of a row. */
export interface TotalsColumn<Row> {
  heading: string;
  label?: string;
  cell: (row: Row) => ComponentChildren;
}

/** A count as the totals show it: 12,345. */
export const count = (value: number) => value.toLocaleString('en-US');

/** Tokens in and out as the totals show them: 1,234 / 567. */
export const tokensInOut = (input: number, output: number) => (
  <>
    {count(input)} / {count(output)}
  </>
);

/** Totals a row per key, model or group: the first column names the row, the others are numbers. */
export function TotalsTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  group,
}: {
  caption: string;
  columns: TotalsColumn<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  /** The row's `data-group`, where a page marks its rows with their group. */
  group?: (row: Row) => string;
}) {
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={column.heading} scope="col" class={index ? 'num' : undefined}>
                {column.heading}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} data-group={group?.(row)}>
              {columns.map((column, index) => (
                <td key={column.heading} data-label={column.label ?? column.heading} class={index ? 'num' : undefined}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
