import { Type } from '@sinclair/typebox';
import { OperationSchema } from '@siteplane/contract';
import { ValidationError } from '../../../domain/field-errors.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { getOperation } from '../../../use-cases/operations/get-operation.js';
import { QueryError } from '../../query-error.js';
import type { RouteDef } from '../../route.js';

/** GET /api/v1/operations/<uuid>: steps, and log lines after `?after=<seq>`. */
export const getOperationRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'GET',
  url: '/api/v1/operations/:operation',
  operationId: 'getOperation',
  summary: 'Progress of a create or delete: steps and log lines',
  tag: 'Operations',
  auth: 'read',
  params: { operation: 'Operation UUID' },
  query: Type.Object({
    after: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'Log lines after this seq (next_after of the last answer)' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 1000 })),
  }),
  responses: { 200: { description: 'The operation', schema: OperationSchema } },
  async handler(req, _reply, actor) {
    const q = req.query as { after?: string; limit?: string };
    const after = QueryError.wrap(() => int(q.after, 'after', 0, 0));
    const limit = QueryError.wrap(() => int(q.limit, 'limit', 1000, 1, 5000));
    return getOperation(deps, actor, (req.params as { operation: string }).operation, after, limit);
  },
});

function int(raw: string | undefined, field: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ValidationError([{ field, code: 'out_of_range', message: `${field} must be an integer from ${min}.` }]);
  return n;
}
