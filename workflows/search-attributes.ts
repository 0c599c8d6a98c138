import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes every lifecycle workflow sets (docs/architecture.md). */
export const NodeIdKey = defineSearchAttributeKey('NodeId', SearchAttributeType.KEYWORD);
export const TenantIdKey = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const PoolIdKey = defineSearchAttributeKey('PoolId', SearchAttributeType.KEYWORD);
export const LifecycleOperationKey = defineSearchAttributeKey(
  'LifecycleOperation',
  SearchAttributeType.KEYWORD,
);
/** The node's hostname at the start: the name an operator knows it by. */
export const HostnameKey = defineSearchAttributeKey('Hostname', SearchAttributeType.KEYWORD);
export const OperationIdKey = defineSearchAttributeKey('OperationId', SearchAttributeType.KEYWORD);
/** A node drain's pool drain: `ParentOperationId = "op_…"` lists the drains of one pool drain. */
export const ParentOperationIdKey = defineSearchAttributeKey(
  'ParentOperationId',
  SearchAttributeType.KEYWORD,
);

export const SEARCH_ATTRIBUTE_KEYS = [
  NodeIdKey,
  TenantIdKey,
  PoolIdKey,
  LifecycleOperationKey,
  OperationIdKey,
  HostnameKey,
  ParentOperationIdKey,
];
