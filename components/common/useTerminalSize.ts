import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

/** Smallest layout the wizard supports. */
export const MIN_COLUMNS = 80;
export const MIN_ROWS = 24;

/** The terminal's columns and rows, updated on resize. */
export function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => readSize(stdout));
  useEffect(() => {
    const onResize = () => setSize(readSize(stdout));
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

function readSize(stdout: NodeJS.WriteStream): { columns: number; rows: number } {
  return { columns: stdout.columns || MIN_COLUMNS, rows: stdout.rows || MIN_ROWS };
}
