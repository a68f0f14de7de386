/** The body claimed to be JSON and was not, or is JSON no route reads: 400 malformed_json. */
export class MalformedJson extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_JSON_BODY';
  readonly statusCode = 400;
  /** What the problem's detail says. */
  constructor(message = 'The body is not valid JSON.') {
    super(message);
    this.name = 'MalformedJson';
  }
}
