import { DotenvParseError, parseDotenv } from '@svcenv/contract/dotenv-parse';
import { fs, path } from './builtins.js';
import { CliError } from './errors.js';

/** Reads and parses a local dotenv file; errors name the file and line, never a value. */
export function readDotenvFile(cwd: string, file: string): Map<string, string> {
  let text: string;
  try {
    text = fs().readFileSync(path().resolve(cwd, file), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError('FILE', `cannot read ${file} (${code})`, code === 'ENOENT' ? 'pass --file <path>' : undefined);
  }
  try {
    return parseDotenv(text);
  } catch (err) {
    if (err instanceof DotenvParseError) throw new CliError('FILE', `${file}: ${err.message}`);
    throw err;
  }
}
