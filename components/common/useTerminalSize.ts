import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

/** Smallest layout the wizard supports. */
export const MIN_COLUMNS = 80;
export const MIN_ROWS = 24;

/** The terminal's columns and rows, updated on resize. */
export function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({ columns: stdout.columns || MIN_COLUMNS, rows: stdout.rows || MIN_ROWS });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
