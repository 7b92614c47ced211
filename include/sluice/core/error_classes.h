// The stable error classes of sluice. Each is documented in docs/errors.md (a unit test checks
// that every class named here is documented there). Add a class here and there together.
#pragma once

#include <string_view>

namespace sluice::errors {

// Generic
inline constexpr std::string_view kInternalError = "INTERNAL_ERROR";
inline constexpr std::string_view kInvalidArgument = "INVALID_ARGUMENT";
inline constexpr std::string_view kNotImplemented = "NOT_IMPLEMENTED";
// Types and schemas
inline constexpr std::string_view kInvalidSchema = "INVALID_SCHEMA";
inline constexpr std::string_view kInvalidDataType = "INVALID_DATA_TYPE";
inline constexpr std::string_view kUnresolvedColumn = "UNRESOLVED_COLUMN";
inline constexpr std::string_view kDatatypeMismatch = "DATATYPE_MISMATCH";
inline constexpr std::string_view kMissingAggregation = "MISSING_AGGREGATION";
inline constexpr std::string_view kNestedAggregateFunction = "NESTED_AGGREGATE_FUNCTION";
inline constexpr std::string_view kInvalidWhereCondition = "INVALID_WHERE_CONDITION";
inline constexpr std::string_view kUnsupportedGroupingExpression = "UNSUPPORTED_GROUPING_EXPRESSION";
inline constexpr std::string_view kUnsupportedGenerator = "UNSUPPORTED_GENERATOR";
inline constexpr std::string_view kUdtfAliasNumberMismatch = "UDTF_ALIAS_NUMBER_MISMATCH";
inline constexpr std::string_view kCollectionSizeLimitExceeded = "COLLECTION_SIZE_LIMIT_EXCEEDED";
// SQL expressions
inline constexpr std::string_view kParseSyntaxError = "PARSE_SYNTAX_ERROR";
inline constexpr std::string_view kUnresolvedRoutine = "UNRESOLVED_ROUTINE";
inline constexpr std::string_view kWrongNumArgs = "WRONG_NUM_ARGS";
inline constexpr std::string_view kInvalidParameterValue = "INVALID_PARAMETER_VALUE";
inline constexpr std::string_view kInvalidFormat = "INVALID_FORMAT";
inline constexpr std::string_view kComparatorReturnsNull = "COMPARATOR_RETURNS_NULL";
inline constexpr std::string_view kInvalidIndexOfZero = "INVALID_INDEX_OF_ZERO";
inline constexpr std::string_view kNullMapKey = "NULL_MAP_KEY";
inline constexpr std::string_view kDuplicatedMapKey = "DUPLICATED_MAP_KEY";
inline constexpr std::string_view kInvalidLambdaFunctionCall = "INVALID_LAMBDA_FUNCTION_CALL";
inline constexpr std::string_view kInvalidExtractField = "INVALID_EXTRACT_FIELD";
inline constexpr std::string_view kMalformedCharacterCoding = "MALFORMED_CHARACTER_CODING";
// SQL statements (MERGE, UPDATE, DELETE)
inline constexpr std::string_view kNonLastMatchedClauseOmitCondition = "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION";
inline constexpr std::string_view kNonLastNotMatchedByTargetClauseOmitCondition = "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION";
inline constexpr std::string_view kNonLastNotMatchedBySourceClauseOmitCondition = "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION";
// SQL expressions in ANSI mode (sql.ansi), at evaluation
inline constexpr std::string_view kCastInvalidInput = "CAST_INVALID_INPUT";
inline constexpr std::string_view kCastOverflow = "CAST_OVERFLOW";
inline constexpr std::string_view kNumericValueOutOfRange = "NUMERIC_VALUE_OUT_OF_RANGE";
inline constexpr std::string_view kArithmeticOverflow = "ARITHMETIC_OVERFLOW";
inline constexpr std::string_view kDivideByZero = "DIVIDE_BY_ZERO";
inline constexpr std::string_view kRemainderByZero = "REMAINDER_BY_ZERO";
inline constexpr std::string_view kInvalidArrayIndex = "INVALID_ARRAY_INDEX";
inline constexpr std::string_view kInvalidArrayIndexInElementAt = "INVALID_ARRAY_INDEX_IN_ELEMENT_AT";
inline constexpr std::string_view kCannotParseTimestamp = "CANNOT_PARSE_TIMESTAMP";
inline constexpr std::string_view kDatetimeFieldOutOfBounds = "DATETIME_FIELD_OUT_OF_BOUNDS";
inline constexpr std::string_view kIllegalDayOfWeek = "ILLEGAL_DAY_OF_WEEK";
// from_json in FAILFAST mode, schema_of_json
inline constexpr std::string_view kMalformedRecordInParsing = "MALFORMED_RECORD_IN_PARSING";
// Options and configuration
inline constexpr std::string_view kInvalidOptions = "INVALID_OPTIONS";
inline constexpr std::string_view kUnresolvedSecret = "UNRESOLVED_SECRET";
// Files
inline constexpr std::string_view kFileNotFound = "FILE_NOT_FOUND";
inline constexpr std::string_view kFileAlreadyExists = "FILE_ALREADY_EXISTS";
inline constexpr std::string_view kFileSinkTransactionCorrupt = "FILE_SINK_TRANSACTION_CORRUPT";
inline constexpr std::string_view kIoError = "IO_ERROR";
// Object stores (S3, Azure Blob Storage)
inline constexpr std::string_view kInvalidStorageUri = "INVALID_STORAGE_URI";
inline constexpr std::string_view kStorageAccessDenied = "STORAGE_ACCESS_DENIED";
inline constexpr std::string_view kStorageCredentialsNotFound = "STORAGE_CREDENTIALS_NOT_FOUND";
inline constexpr std::string_view kStorageConditionalWriteUnsupported = "STORAGE_CONDITIONAL_WRITE_UNSUPPORTED";
inline constexpr std::string_view kStorageLeaseHeld = "STORAGE_LEASE_HELD";
inline constexpr std::string_view kMalformedCsvRecord = "MALFORMED_CSV_RECORD";
inline constexpr std::string_view kMalformedJsonRecord = "MALFORMED_JSON_RECORD";
inline constexpr std::string_view kInvalidUtf8String = "INVALID_UTF8_STRING";
// Parquet
inline constexpr std::string_view kParquetCorruptFile = "PARQUET_CORRUPT_FILE";
inline constexpr std::string_view kParquetUnsupportedFeature = "PARQUET_UNSUPPORTED_FEATURE";
// Delta
inline constexpr std::string_view kDeltaLogCorrupt = "DELTA_LOG_CORRUPT";
inline constexpr std::string_view kDeltaProtocolUnsupported = "DELTA_PROTOCOL_UNSUPPORTED";
inline constexpr std::string_view kDeltaTableNotFound = "DELTA_TABLE_NOT_FOUND";
inline constexpr std::string_view kDeltaTableAlreadyExists = "DELTA_TABLE_ALREADY_EXISTS";
inline constexpr std::string_view kDeltaVersionNotFound = "DELTA_VERSION_NOT_FOUND";
inline constexpr std::string_view kDeltaConcurrentModification = "DELTA_CONCURRENT_MODIFICATION";
inline constexpr std::string_view kDeltaSchemaMismatch = "DELTA_SCHEMA_MISMATCH";
inline constexpr std::string_view kDeltaSourceDataDeleted = "DELTA_SOURCE_DATA_DELETED";
inline constexpr std::string_view kDeltaInvalidCharactersInColumnNames = "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES";
inline constexpr std::string_view kDeltaDeletionVectorCorrupt = "DELTA_DELETION_VECTOR_CORRUPT";
inline constexpr std::string_view kDeltaMultipleSourceRowMatchingTargetRowInMerge = "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE";
inline constexpr std::string_view kDeltaMetadataMismatch = "DELTA_METADATA_MISMATCH";
inline constexpr std::string_view kDeltaPartitionColumnNotFound = "DELTA_PARTITION_COLUMN_NOT_FOUND";
inline constexpr std::string_view kDeltaInvalidPartitionColumnType = "DELTA_INVALID_PARTITION_COLUMN_TYPE";
inline constexpr std::string_view kDeltaDuplicateColumnsFound = "DELTA_DUPLICATE_COLUMNS_FOUND";
inline constexpr std::string_view kDeltaCannotUseAllColumnsForPartition = "DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION";
inline constexpr std::string_view kDeltaNonPartitionColumnReference = "DELTA_NON_PARTITION_COLUMN_REFERENCE";
inline constexpr std::string_view kDeltaZorderingOnPartitionColumn = "DELTA_ZORDERING_ON_PARTITION_COLUMN";
inline constexpr std::string_view kDeltaVacuumRetentionPeriodTooShort = "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT";
inline constexpr std::string_view kDeltaCannotRestoreTableVersion = "DELTA_CANNOT_RESTORE_TABLE_VERSION";
inline constexpr std::string_view kDeltaCannotRestoreTimestampEarlier = "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER";
inline constexpr std::string_view kDeltaCannotRestoreTimestampGreater = "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER";
inline constexpr std::string_view kDeltaUnknownConfiguration = "DELTA_UNKNOWN_CONFIGURATION";
inline constexpr std::string_view kDeltaCannotModifyTableProperty = "DELTA_CANNOT_MODIFY_TABLE_PROPERTY";
inline constexpr std::string_view kDeltaUnsupportedColumnMappingModeChange = "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE";
inline constexpr std::string_view kDeltaUnsupportedRenameColumn = "DELTA_UNSUPPORTED_RENAME_COLUMN";
inline constexpr std::string_view kDeltaUnsupportedDropColumn = "DELTA_UNSUPPORTED_DROP_COLUMN";
inline constexpr std::string_view kDeltaUnsupportedDropPartitionColumn = "DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN";
inline constexpr std::string_view kDeltaStreamingIncompatibleSchemaChange = "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG";
inline constexpr std::string_view kDeltaOperationNotAllowed = "DELTA_OPERATION_NOT_ALLOWED";
inline constexpr std::string_view kDeltaUnsupportedAlterTableChangeColOp = "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP";
inline constexpr std::string_view kNotSupportedChangeColumn = "NOT_SUPPORTED_CHANGE_COLUMN";
inline constexpr std::string_view kFieldAlreadyExists = "FIELD_ALREADY_EXISTS";
inline constexpr std::string_view kInvalidFieldName = "INVALID_FIELD_NAME";
// PostgreSQL
inline constexpr std::string_view kJdbcStreamingSinkInvalidOptions = "JDBC_STREAMING_SINK_INVALID_OPTIONS";
inline constexpr std::string_view kPgUpsertKeyMismatch = "PG_UPSERT_KEY_MISMATCH";
inline constexpr std::string_view kPgSchemaMismatch = "PG_SCHEMA_MISMATCH";
inline constexpr std::string_view kPgConnectionFailed = "PG_CONNECTION_FAILED";
inline constexpr std::string_view kPgQueryFailed = "PG_QUERY_FAILED";
inline constexpr std::string_view kPgReplicationProtocolError = "PG_REPLICATION_PROTOCOL_ERROR";
inline constexpr std::string_view kPgTableAlreadyExists = "PG_TABLE_ALREADY_EXISTS";
// Change feed
inline constexpr std::string_view kCdfInvalidOptions = "CDF_INVALID_OPTIONS";
inline constexpr std::string_view kCdfNotReady = "CDF_NOT_READY";
inline constexpr std::string_view kCdfStateCorrupt = "CDF_STATE_CORRUPT";
inline constexpr std::string_view kCdfAlreadyRunning = "CDF_ALREADY_RUNNING";
inline constexpr std::string_view kCdfHistoryNameTaken = "CDF_HISTORY_NAME_TAKEN";
inline constexpr std::string_view kCdfAlreadyExists = "CDF_ALREADY_EXISTS";
inline constexpr std::string_view kCdfNotFound = "CDF_NOT_FOUND";
// Kafka
inline constexpr std::string_view kKafkaAuthenticationFailed = "KAFKA_AUTHENTICATION_FAILED";
inline constexpr std::string_view kKafkaDataLoss = "KAFKA_DATA_LOSS";
inline constexpr std::string_view kKafkaRequestFailed = "KAFKA_REQUEST_FAILED";
// Formats (decoding Kafka keys and values)
inline constexpr std::string_view kJsonSchemaInvalid = "JSON_SCHEMA_INVALID";
inline constexpr std::string_view kAvroSchemaInvalid = "AVRO_SCHEMA_INVALID";
inline constexpr std::string_view kSchemaRegistryRequestFailed = "SCHEMA_REGISTRY_REQUEST_FAILED";
inline constexpr std::string_view kSchemaRegistryNotFound = "SCHEMA_REGISTRY_NOT_FOUND";
inline constexpr std::string_view kSchemaRegistryUnauthorized = "SCHEMA_REGISTRY_UNAUTHORIZED";
inline constexpr std::string_view kProtobufSchemaInvalid = "PROTOBUF_SCHEMA_INVALID";
inline constexpr std::string_view kProtobufMessageNotFound = "PROTOBUF_MESSAGE_NOT_FOUND";
inline constexpr std::string_view kProtobufUnsupportedField = "PROTOBUF_UNSUPPORTED_FIELD";
// Embedded services
inline constexpr std::string_view kEmbeddedServiceFailed = "EMBEDDED_SERVICE_FAILED";
// Streaming engine
inline constexpr std::string_view kConcurrentQuery = "CONCURRENT_QUERY";
inline constexpr std::string_view kQueryStopped = "QUERY_STOPPED";
inline constexpr std::string_view kCheckpointCorrupt = "CHECKPOINT_CORRUPT";
inline constexpr std::string_view kUnsupportedOutputMode = "UNSUPPORTED_OUTPUT_MODE";
inline constexpr std::string_view kCannotLoadStateStore = "CANNOT_LOAD_STATE_STORE";
inline constexpr std::string_view kUnsupportedTrigger = "UNSUPPORTED_TRIGGER";
inline constexpr std::string_view kUnsupportedChangelogAggregate = "UNSUPPORTED_CHANGELOG_AGGREGATE";
inline constexpr std::string_view kDataSourceNotFound = "DATA_SOURCE_NOT_FOUND";
inline constexpr std::string_view kForeachBatchFunctionNotFound = "FOREACH_BATCH_FUNCTION_NOT_FOUND";
inline constexpr std::string_view kPythonCallbackFailed = "PYTHON_CALLBACK_FAILED";
inline constexpr std::string_view kTableOrViewNotFound = "TABLE_OR_VIEW_NOT_FOUND";
inline constexpr std::string_view kTableOrViewAlreadyExists = "TABLE_OR_VIEW_ALREADY_EXISTS";
inline constexpr std::string_view kPathAlreadyExists = "PATH_ALREADY_EXISTS";
inline constexpr std::string_view kSourceOffsetInvalid = "SOURCE_OFFSET_INVALID";
// Plugins
inline constexpr std::string_view kPluginLoadFailed = "PLUGIN_LOAD_FAILED";
inline constexpr std::string_view kPluginSymbolNotFound = "PLUGIN_SYMBOL_NOT_FOUND";
inline constexpr std::string_view kPluginAbiMismatch = "PLUGIN_ABI_MISMATCH";
// Pipelines
inline constexpr std::string_view kInvalidPipeline = "INVALID_PIPELINE";
inline constexpr std::string_view kExpectationViolation = "EXPECTATION_VIOLATION";
inline constexpr std::string_view kStreamAlreadyExists = "STREAM_ALREADY_EXISTS";
inline constexpr std::string_view kStreamNotFound = "STREAM_NOT_FOUND";
inline constexpr std::string_view kStreamUpdateNotAllowed = "STREAM_UPDATE_NOT_ALLOWED";
inline constexpr std::string_view kStreamSchemaIncompatible = "STREAM_SCHEMA_INCOMPATIBLE";
// Connections
inline constexpr std::string_view kConnectionAlreadyExists = "CONNECTION_ALREADY_EXISTS";
inline constexpr std::string_view kConnectionNotFound = "CONNECTION_NOT_FOUND";
inline constexpr std::string_view kConnectionLiteralSecret = "CONNECTION_LITERAL_SECRET";
inline constexpr std::string_view kInvalidConnectionName = "INVALID_CONNECTION_NAME";
inline constexpr std::string_view kConnectionCorrupt = "CONNECTION_CORRUPT";

}  // namespace sluice::errors
