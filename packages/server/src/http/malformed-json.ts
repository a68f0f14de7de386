/** The body claimed to be JSON and was not: 400 malformed_json. */
export class MalformedJson extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_JSON_BODY';
  readonly statusCode = 400;
  constructor() {
    super('malformed JSON body');
    this.name = 'MalformedJson';
  }
}
