#include "expr/parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "expr/datetime.h"
#include "sluice/expr/dml.h"

namespace sluice::expr {
namespace {

// Deep enough for any hand-written expression; shallow enough that recursion cannot exhaust
// the stack on hostile input.
constexpr int kMaxDepth = 200;

enum class TokenKind : uint8_t { kWord, kQuotedWord, kString, kNumber, kSymbol, kEnd };

struct Token {
  TokenKind kind;
  std::string text;  // word as written, quoted word / string unescaped, number / symbol as written
  size_t offset;     // byte offset in the source
  int line;
  int column;
};

Status SyntaxError(int line, int column, std::string_view what) {
  return Status::Error(errors::kParseSyntaxError, fmt::format("at {}:{}: {}", line, column, what));
}

bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      Token t{TokenKind::kEnd, "", pos_, line_, Column()};
      if (pos_ >= src_.size()) {
        tokens.push_back(std::move(t));
        return tokens;
      }
      char c = src_[pos_];
      bool after_operand = !tokens.empty() && (tokens.back().kind == TokenKind::kWord ||
                                               tokens.back().kind == TokenKind::kQuotedWord ||
                                               tokens.back().text == ")" || tokens.back().text == "]");
      if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]) && !after_operand)) {
        SLUICE_RETURN_IF_ERROR(LexNumber(&t));
      } else if (IsWordStart(c)) {
        size_t start = pos_;
        while (pos_ < src_.size() && IsWordChar(src_[pos_])) ++pos_;
        t.kind = TokenKind::kWord;
        t.text = std::string(src_.substr(start, pos_ - start));
      } else if (c == '`') {
        SLUICE_RETURN_IF_ERROR(LexQuotedWord(&t));
      } else if (c == '\'' || c == '"') {
        SLUICE_RETURN_IF_ERROR(LexString(&t));
      } else {
        SLUICE_RETURN_IF_ERROR(LexSymbol(&t));
      }
      tokens.push_back(std::move(t));
    }
  }

 private:
  int Column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  void Advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }

  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        Advance();
      } else if (c == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '-') {
        while (pos_ < src_.size() && src_[pos_] != '\n') Advance();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '*') {
        Advance();
        Advance();
        while (pos_ < src_.size() && !(src_[pos_] == '*' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/')) Advance();
        if (pos_ < src_.size()) {
          Advance();
          Advance();
        }
      } else {
        return;
      }
    }
  }

  Status LexNumber(Token* t) {
    size_t start = pos_;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    if (pos_ < src_.size() && src_[pos_] == '.') {
      ++pos_;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && IsDigit(src_[p])) {
        pos_ = p;
        while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
      }
    }
    // Type suffixes: L S Y D F BD.
    if (pos_ + 1 < src_.size() && (src_[pos_] == 'b' || src_[pos_] == 'B') &&
        (src_[pos_ + 1] == 'd' || src_[pos_ + 1] == 'D')) {
      pos_ += 2;
    } else if (pos_ < src_.size() && std::string_view("lLsSyYdDfF").find(src_[pos_]) != std::string_view::npos) {
      ++pos_;
    }
    if (pos_ < src_.size() && IsWordChar(src_[pos_])) {
      return SyntaxError(t->line, t->column,
                         fmt::format("malformed number '{}'", src_.substr(start, pos_ - start + 1)));
    }
    t->kind = TokenKind::kNumber;
    t->text = std::string(src_.substr(start, pos_ - start));
    return Status::OK();
  }

  Status LexQuotedWord(Token* t) {
    Advance();
    std::string text;
    while (true) {
      if (pos_ >= src_.size()) return SyntaxError(t->line, t->column, "unterminated back-quoted identifier");
      char c = src_[pos_];
      if (c == '`') {
        if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '`') {
          text += '`';
          Advance();
          Advance();
          continue;
        }
        Advance();
        break;
      }
      text += c;
      Advance();
    }
    if (text.empty()) return SyntaxError(t->line, t->column, "empty back-quoted identifier");
    t->kind = TokenKind::kQuotedWord;
    t->text = std::move(text);
    return Status::OK();
  }

  Status LexString(Token* t) {
    char quote = src_[pos_];
    Advance();
    std::string text;
    while (true) {
      if (pos_ >= src_.size()) return SyntaxError(t->line, t->column, "unterminated string literal");
      char c = src_[pos_];
      if (c == quote) {
        if (pos_ + 1 < src_.size() && src_[pos_ + 1] == quote) {
          text += quote;
          Advance();
          Advance();
          continue;
        }
        Advance();
        break;
      }
      if (c == '\\' && pos_ + 1 < src_.size()) {
        Advance();
        char e = src_[pos_];
        // \ooo: three octal digits, the first 0 or 1, name the ASCII character of that code (Spark's
        // unescapeSQLString); \110 is H.
        auto octal = [&](size_t at, char high) {
          return at < src_.size() && src_[at] >= '0' && src_[at] <= high;
        };
        if (octal(pos_, '1') && octal(pos_ + 1, '7') && octal(pos_ + 2, '7')) {
          AppendUtf8(&text, static_cast<uint32_t>((e - '0') * 64 + (src_[pos_ + 1] - '0') * 8 + (src_[pos_ + 2] - '0')));
          pos_ += 2;
          Advance();
          continue;
        }
        switch (e) {
          case 'n': text += '\n'; break;
          case 't': text += '\t'; break;
          case 'r': text += '\r'; break;
          case 'b': text += '\b'; break;
          case '0': text += '\0'; break;
          case 'Z': text += '\x1a'; break;
          case '%': text += "\\%"; break;  // kept for LIKE, as Spark does
          case '_': text += "\\_"; break;
          case 'u': {
            if (pos_ + 4 >= src_.size()) return SyntaxError(line_, Column(), "malformed \\u escape");
            uint32_t cp = 0;
            for (int i = 1; i <= 4; ++i) {
              char h = src_[pos_ + i];
              if (!std::isxdigit(static_cast<unsigned char>(h))) return SyntaxError(line_, Column(), "malformed \\u escape");
              cp = cp * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            }
            pos_ += 4;
            AppendUtf8(&text, cp);
            break;
          }
          default: text += e; break;
        }
        Advance();
        continue;
      }
      text += c;
      Advance();
    }
    t->kind = TokenKind::kString;
    t->text = std::move(text);
    return Status::OK();
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Status LexSymbol(Token* t) {
    static constexpr std::string_view kSymbols[] = {"<=>", "<=", ">=", "<>", "!=", "==", "||", "::", "->", "+", "-",
                                                    "*",   "/",  "%",  "(",  ")",  ",",  ".",  "[",  "]", "=",
                                                    "<",   ">",  "!",  ":",  ";"};
    for (std::string_view s : kSymbols) {
      if (src_.substr(pos_, s.size()) == s) {
        t->kind = TokenKind::kSymbol;
        t->text = std::string(s);
        pos_ += s.size();
        return Status::OK();
      }
    }
    unsigned char c = static_cast<unsigned char>(src_[pos_]);
    std::string shown = std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    return SyntaxError(t->line, t->column, fmt::format("unexpected character '{}'", shown));
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

// Words that end or join expressions and so cannot name a column unless back-quoted.
bool IsReservedWord(std::string_view w) {
  static constexpr std::string_view kReserved[] = {
      "and", "or", "not", "is", "in", "between", "like", "ilike", "rlike", "regexp", "case", "when", "then",
      "else", "end", "as", "div", "escape", "from", "for", "distinct", "null", "true", "false"};
  for (std::string_view r : kReserved) {
    if (EqualsIgnoreCase(w, r)) return true;
  }
  return false;
}

class Parser {
 public:
  Parser(std::string_view src, std::vector<Token> tokens) : src_(src), tokens_(std::move(tokens)) {}

  Result<NodePtr> ParseWhole() {
    SLUICE_ASSIGN_OR_RETURN(NodePtr node, ParseExpr());
    if (Peek().kind != TokenKind::kEnd) return Unexpected("the end of the expression");
    return node;
  }

  Result<NamedTree> ParseNamed() {
    SLUICE_ASSIGN_OR_RETURN(NodePtr node, ParseExpr());
    NamedTree named{std::move(node), ""};
    bool has_as = AcceptKeyword("as");
    const Token& t = Peek();
    if (t.kind == TokenKind::kQuotedWord || (t.kind == TokenKind::kWord && !IsReservedWord(t.text))) {
      named.alias = Next().text;
    } else if (has_as) {
      return Unexpected("an alias name");
    }
    if (Peek().kind != TokenKind::kEnd) return Unexpected("the end of the expression");
    return named;
  }

  // SELECT items [FROM [STREAM(]name[)]] [WHERE c] [GROUP BY e, ...] [HAVING c]; without FROM the
  // items are over one row of no columns, as in Spark (`SELECT *` needs a FROM).
  Result<SelectTree> ParseSelect() {
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("select"));
    SelectTree select;
    if (IsSymbol(Peek(), "*") && IsKeyword(Peek(1), "from")) {
      Next();
    } else {
      do {
        SLUICE_ASSIGN_OR_RETURN(NodePtr node, ParseExpr());
        NamedTree item{std::move(node), ""};
        bool has_as = AcceptKeyword("as");
        const Token& t = Peek();
        if (t.kind == TokenKind::kQuotedWord ||
            (t.kind == TokenKind::kWord && !IsReservedWord(t.text) && !IsClauseWord(t.text))) {
          item.alias = Next().text;
        } else if (has_as) {
          return Unexpected("an alias name");
        }
        select.items.push_back(std::move(item));
      } while (AcceptSymbol(","));
    }
    if (select.items.empty() || IsKeyword(Peek(), "from")) {
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("from"));
      if (IsKeyword(Peek(), "stream") && IsSymbol(Peek(1), "(")) {
        Next();
        Next();
        select.streaming = true;
        SLUICE_ASSIGN_OR_RETURN(select.from, ParseTableName());
        SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
      } else {
        SLUICE_ASSIGN_OR_RETURN(select.from, ParseTableName());
      }
    }
    if (AcceptKeyword("where")) {
      SLUICE_ASSIGN_OR_RETURN(select.where, ParseExpr());
    }
    if (AcceptKeyword("group")) {
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("by"));
      do {
        SLUICE_ASSIGN_OR_RETURN(NodePtr key, ParseExpr());
        select.group_by.push_back(std::move(key));
      } while (AcceptSymbol(","));
    }
    if (AcceptKeyword("having")) {
      SLUICE_ASSIGN_OR_RETURN(select.having, ParseExpr());
    }
    AcceptSymbol(";");
    if (Peek().kind != TokenKind::kEnd) {
      return Unexpected(select.from.empty() ? "FROM, WHERE, GROUP BY, HAVING or the end of the statement"
                                            : "WHERE, GROUP BY, HAVING or the end of the statement");
    }
    return select;
  }

  // MERGE ... | UPDATE ... | DELETE FROM ... (dml.h)
  Result<DmlStatement> ParseDmlStatement() {
    DmlStatement statement;
    if (AcceptKeyword("merge")) {
      SLUICE_ASSIGN_OR_RETURN(statement, ParseMergeRest());
    } else if (AcceptKeyword("update")) {
      UpdateStatement update;
      SLUICE_ASSIGN_OR_RETURN(update.target, ParseTableName());
      SLUICE_ASSIGN_OR_RETURN(update.target_alias, ParseTableAlias());
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("set"));
      SLUICE_ASSIGN_OR_RETURN(update.assignments, ParseAssignments());
      if (AcceptKeyword("where")) {
        SLUICE_ASSIGN_OR_RETURN(NodePtr where, ParseExpr());
        update.where = Expression(std::move(where));
      }
      statement = std::move(update);
    } else if (AcceptKeyword("delete")) {
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("from"));
      DeleteStatement del;
      SLUICE_ASSIGN_OR_RETURN(del.target, ParseTableName());
      SLUICE_ASSIGN_OR_RETURN(del.target_alias, ParseTableAlias());
      if (AcceptKeyword("where")) {
        SLUICE_ASSIGN_OR_RETURN(NodePtr where, ParseExpr());
        del.where = Expression(std::move(where));
      }
      statement = std::move(del);
    } else {
      return Unexpected("MERGE, UPDATE or DELETE");
    }
    AcceptSymbol(";");
    if (Peek().kind != TokenKind::kEnd) return Unexpected("the end of the statement");
    return statement;
  }

  // The action of a clause alone (ParseMergeAction).
  Result<MergeClause> ParseActionOnly(MergeMatch match) {
    MergeClause clause{.match = match};
    SLUICE_RETURN_IF_ERROR(ParseMergeAction(&clause));
    if (Peek().kind != TokenKind::kEnd) return Unexpected("the end of the action");
    return clause;
  }

 private:
  // [WITH SCHEMA EVOLUTION] INTO target [alias] USING source [alias] ON cond clause...
  Result<MergeStatement> ParseMergeRest() {
    MergeStatement merge;
    if (AcceptKeyword("with")) {
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("schema"));
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("evolution"));
      merge.with_schema_evolution = true;
    }
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("into"));
    SLUICE_ASSIGN_OR_RETURN(merge.target, ParseTableName());
    SLUICE_ASSIGN_OR_RETURN(merge.target_alias, ParseTableAlias());
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("using"));
    SLUICE_ASSIGN_OR_RETURN(merge.source, ParseTableName());
    SLUICE_ASSIGN_OR_RETURN(merge.source_alias, ParseTableAlias());
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("on"));
    SLUICE_ASSIGN_OR_RETURN(NodePtr on, ParseExpr());
    merge.on = Expression(std::move(on));
    while (IsKeyword(Peek(), "when")) {
      Next();
      MergeClause clause;
      if (AcceptKeyword("not")) {
        SLUICE_RETURN_IF_ERROR(ExpectKeyword("matched"));
        clause.match = MergeMatch::kNotMatched;
        if (AcceptKeyword("by")) {
          if (AcceptKeyword("source")) {
            clause.match = MergeMatch::kNotMatchedBySource;
          } else if (!AcceptKeyword("target")) {
            return Unexpected("TARGET or SOURCE");
          }
        }
      } else {
        SLUICE_RETURN_IF_ERROR(ExpectKeyword("matched"));
      }
      if (AcceptKeyword("and")) {
        SLUICE_ASSIGN_OR_RETURN(NodePtr condition, ParseExpr());
        clause.condition = Expression(std::move(condition));
      }
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("then"));
      SLUICE_RETURN_IF_ERROR(ParseMergeAction(&clause));
      merge.clauses.push_back(std::move(clause));
    }
    if (merge.clauses.empty()) return Unexpected("WHEN");
    SLUICE_RETURN_IF_ERROR(CheckMergeClauses(merge.clauses));
    return merge;
  }

  // DELETE | UPDATE SET * | UPDATE SET assignments | INSERT * | INSERT (cols) VALUES (exprs),
  // those the clause's kind allows.
  Status ParseMergeAction(MergeClause* clause) {
    const bool matched_kind = clause->match != MergeMatch::kNotMatched;
    if (matched_kind && AcceptKeyword("delete")) {
      clause->action = MergeActionKind::kDelete;
      return Status::OK();
    }
    if (matched_kind && AcceptKeyword("update")) {
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("set"));
      if (clause->match == MergeMatch::kMatched && AcceptSymbol("*")) {
        clause->action = MergeActionKind::kUpdateAll;
        return Status::OK();
      }
      clause->action = MergeActionKind::kUpdate;
      SLUICE_ASSIGN_OR_RETURN(clause->assignments, ParseAssignments());
      return Status::OK();
    }
    if (!matched_kind && AcceptKeyword("insert")) {
      if (AcceptSymbol("*")) {
        clause->action = MergeActionKind::kInsertAll;
        return Status::OK();
      }
      clause->action = MergeActionKind::kInsert;
      SLUICE_RETURN_IF_ERROR(ExpectSymbol("("));
      std::vector<std::vector<std::string>> columns;
      do {
        SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> column, ParseColumnPath());
        columns.push_back(std::move(column));
      } while (AcceptSymbol(","));
      SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("values"));
      SLUICE_RETURN_IF_ERROR(ExpectSymbol("("));
      std::vector<NodePtr> values;
      do {
        SLUICE_ASSIGN_OR_RETURN(NodePtr value, ParseExpr());
        values.push_back(std::move(value));
      } while (AcceptSymbol(","));
      if (values.size() != columns.size()) {
        return Unexpected(fmt::format("')' after {} values, one per column", columns.size()));
      }
      SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
      for (size_t i = 0; i < columns.size(); ++i) {
        clause->assignments.push_back(Assignment{std::move(columns[i]), Expression(std::move(values[i]))});
      }
      return Status::OK();
    }
    switch (clause->match) {
      case MergeMatch::kMatched: return Unexpected("UPDATE or DELETE");
      case MergeMatch::kNotMatched: return Unexpected("INSERT");
      case MergeMatch::kNotMatchedBySource: return Unexpected("UPDATE SET column = value or DELETE");
    }
    return Status::OK();
  }

  // col = expr, ...
  Result<std::vector<Assignment>> ParseAssignments() {
    std::vector<Assignment> assignments;
    do {
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> column, ParseColumnPath());
      if (!AcceptSymbol("=") && !AcceptSymbol("==")) return Unexpected("'='");
      SLUICE_ASSIGN_OR_RETURN(NodePtr value, ParseExpr());
      assignments.push_back(Assignment{std::move(column), Expression(std::move(value))});
    } while (AcceptSymbol(","));
    return assignments;
  }

  // name(.name)*: a column, maybe qualified by a table alias or naming a struct field.
  Result<std::vector<std::string>> ParseColumnPath() {
    std::vector<std::string> parts;
    do {
      const Token& t = Peek();
      if (t.kind != TokenKind::kQuotedWord && (t.kind != TokenKind::kWord || IsReservedWord(t.text))) {
        return Unexpected("a column name");
      }
      parts.push_back(Next().text);
    } while (AcceptSymbol("."));
    return parts;
  }

  // [AS] alias after a statement's table name; the name's last part when there is none.
  Result<std::string> ParseTableAlias() {
    static constexpr std::string_view kFollowing[] = {"using", "on", "set", "where", "when"};
    bool has_as = AcceptKeyword("as");
    const Token& t = Peek();
    bool word = t.kind == TokenKind::kQuotedWord || (t.kind == TokenKind::kWord && !IsReservedWord(t.text));
    for (std::string_view w : kFollowing) {
      if (t.kind == TokenKind::kWord && EqualsIgnoreCase(t.text, w)) word = false;
    }
    if (word) return std::string(Next().text);
    if (has_as) return Unexpected("an alias name");
    // Without an alias, columns are qualified by the table name's last part, as in Spark.
    return tokens_[pos_ - 1].text;
  }

  // Words that begin a clause of a SELECT statement: never an alias written without AS.
  static bool IsClauseWord(std::string_view w) {
    static constexpr std::string_view kClauses[] = {"where", "group", "having", "order", "limit", "union", "select"};
    for (std::string_view c : kClauses) {
      if (EqualsIgnoreCase(w, c)) return true;
    }
    return false;
  }

  // name(.name)*, each part a word or a back-quoted word; the parts as written, quotes removed.
  Result<std::vector<std::string>> ParseTableName() {
    std::vector<std::string> parts;
    do {
      const Token& t = Peek();
      if (t.kind != TokenKind::kQuotedWord && (t.kind != TokenKind::kWord || IsReservedWord(t.text) || IsClauseWord(t.text))) {
        return Unexpected("a table name");
      }
      parts.push_back(Next().text);
    } while (AcceptSymbol("."));
    return parts;
  }

  // --- token helpers ---
  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsKeyword(const Token& t, std::string_view kw) const {
    return t.kind == TokenKind::kWord && EqualsIgnoreCase(t.text, kw);
  }
  bool IsSymbol(const Token& t, std::string_view s) const { return t.kind == TokenKind::kSymbol && t.text == s; }
  bool AcceptKeyword(std::string_view kw) {
    if (!IsKeyword(Peek(), kw)) return false;
    Next();
    return true;
  }
  bool AcceptSymbol(std::string_view s) {
    if (!IsSymbol(Peek(), s)) return false;
    Next();
    return true;
  }
  Status Unexpected(std::string_view expected) const {
    const Token& t = Peek();
    if (t.kind == TokenKind::kEnd) return SyntaxError(t.line, t.column, fmt::format("unexpected end of input, expected {}", expected));
    std::string_view shown = t.kind == TokenKind::kString ? std::string_view("string literal") : std::string_view(t.text);
    return SyntaxError(t.line, t.column, fmt::format("syntax error at or near '{}', expected {}", shown, expected));
  }
  Status ExpectKeyword(std::string_view kw) {
    if (!AcceptKeyword(kw)) return Unexpected(Upper(kw));
    return Status::OK();
  }
  Status ExpectSymbol(std::string_view s) {
    if (!AcceptSymbol(s)) return Unexpected(fmt::format("'{}'", s));
    return Status::OK();
  }
  static std::string Upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
  }

  // --- node helpers ---
  static std::shared_ptr<Node> NewNode(NodeKind kind, const Token& at) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = at.line;
    n->column = at.column;
    return n;
  }
  // A finished node, its height computed from its arguments'.
  static NodePtr Sealed(std::shared_ptr<Node> n) {
    for (const NodePtr& arg : n->args) n->height = std::max(n->height, arg->height + 1);
    return n;
  }
  static NodePtr Call(std::string name, std::vector<NodePtr> args, const Token& at, bool negated = false) {
    auto n = NewNode(NodeKind::kCall, at);
    n->name = std::move(name);
    n->args = std::move(args);
    n->negated = negated;
    return Sealed(std::move(n));
  }
  static NodePtr CallAt(std::string name, std::vector<NodePtr> args, const Node& at, bool negated = false) {
    Token t{TokenKind::kEnd, "", 0, at.line, at.column};
    return Call(std::move(name), std::move(args), t, negated);
  }

  struct DepthGuard {
    explicit DepthGuard(int* d) : depth(d) { ++*depth; }
    ~DepthGuard() { --*depth; }
    int* depth;
  };
  Status CheckDepth() const {
    if (depth_ > kMaxDepth) {
      const Token& t = Peek();
      return SyntaxError(t.line, t.column, fmt::format("expression nests deeper than {} levels", kMaxDepth));
    }
    return Status::OK();
  }
  // Operator chains (`a + b + ...`, `x OR y OR ...`, `a.b[0].c`, `x IS NULL IS NULL`) grow a tree
  // without recursing in the parser; everything that walks the tree later (binder, printer,
  // evaluator, destructor) recurses, so the tree's height is bounded too.
  Status CheckHeight(const NodePtr& node) const {
    if (node->height > kMaxDepth) {
      return SyntaxError(node->line, node->column,
                         fmt::format("expression nests deeper than {} levels (a chain of more than {} operators; "
                                     "a long OR of equalities can be written as IN (...))",
                                     kMaxDepth, kMaxDepth));
    }
    return Status::OK();
  }

  // --- grammar ---
  Result<NodePtr> ParseExpr() { return ParseOr(); }

  Result<NodePtr> ParseOr() {
    DepthGuard guard(&depth_);
    SLUICE_RETURN_IF_ERROR(CheckDepth());
    SLUICE_ASSIGN_OR_RETURN(NodePtr left, ParseAnd());
    while (IsKeyword(Peek(), "or")) {
      Next();
      SLUICE_ASSIGN_OR_RETURN(NodePtr right, ParseAnd());
      left = CallAt("or", {left, right}, *left);
      SLUICE_RETURN_IF_ERROR(CheckHeight(left));
    }
    return left;
  }

  Result<NodePtr> ParseAnd() {
    SLUICE_ASSIGN_OR_RETURN(NodePtr left, ParseNot());
    while (IsKeyword(Peek(), "and")) {
      Next();
      SLUICE_ASSIGN_OR_RETURN(NodePtr right, ParseNot());
      left = CallAt("and", {left, right}, *left);
      SLUICE_RETURN_IF_ERROR(CheckHeight(left));
    }
    return left;
  }

  Result<NodePtr> ParseNot() {
    DepthGuard guard(&depth_);
    SLUICE_RETURN_IF_ERROR(CheckDepth());
    if (IsKeyword(Peek(), "not") || IsSymbol(Peek(), "!")) {
      const Token& at = Next();
      Token pos = at;
      SLUICE_ASSIGN_OR_RETURN(NodePtr operand, ParseNot());
      return Call("not", {operand}, pos);
    }
    return ParsePredicated();
  }

  // valueExpression followed by any number of predicates.
  Result<NodePtr> ParsePredicated() {
    SLUICE_ASSIGN_OR_RETURN(NodePtr left, ParseBinary(0));
    while (true) {
      const Token& t = Peek();
      if (IsKeyword(t, "is")) {
        Next();
        bool negated = AcceptKeyword("not");
        if (AcceptKeyword("null")) {
          left = CallAt(negated ? "isnotnull" : "isnull", {left}, *left);
        } else if (AcceptKeyword("true")) {
          left = CallAt("istrue", {left}, *left, negated);
        } else if (AcceptKeyword("false")) {
          left = CallAt("isfalse", {left}, *left, negated);
        } else if (AcceptKeyword("unknown")) {
          left = CallAt(negated ? "isnotnull" : "isnull", {left}, *left);
        } else if (AcceptKeyword("distinct")) {
          SLUICE_RETURN_IF_ERROR(ExpectKeyword("from"));
          SLUICE_ASSIGN_OR_RETURN(NodePtr right, ParseBinary(0));
          left = CallAt("<=>", {left, right}, *left);
          if (!negated) left = CallAt("not", {left}, *left);
        } else {
          return Unexpected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS");
        }
        SLUICE_RETURN_IF_ERROR(CheckHeight(left));
        continue;
      }
      bool negated = false;
      if (IsKeyword(t, "not") && (IsKeyword(Peek(1), "in") || IsKeyword(Peek(1), "between") ||
                                  IsKeyword(Peek(1), "like") || IsKeyword(Peek(1), "ilike") ||
                                  IsKeyword(Peek(1), "rlike") || IsKeyword(Peek(1), "regexp"))) {
        Next();
        negated = true;
      }
      const Token& op = Peek();
      if (AcceptKeyword("in")) {
        SLUICE_RETURN_IF_ERROR(ExpectSymbol("("));
        std::vector<NodePtr> args{left};
        do {
          SLUICE_ASSIGN_OR_RETURN(NodePtr v, ParseExpr());
          args.push_back(std::move(v));
        } while (AcceptSymbol(","));
        SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
        left = CallAt("in", std::move(args), *left, negated);
      } else if (AcceptKeyword("between")) {
        SLUICE_ASSIGN_OR_RETURN(NodePtr lower, ParseBinary(0));
        SLUICE_RETURN_IF_ERROR(ExpectKeyword("and"));
        SLUICE_ASSIGN_OR_RETURN(NodePtr upper, ParseBinary(0));
        left = CallAt("between", {left, lower, upper}, *left, negated);
      } else if (IsKeyword(op, "like") || IsKeyword(op, "ilike")) {
        std::string name = AsciiLower(Next().text);
        SLUICE_ASSIGN_OR_RETURN(NodePtr pattern, ParseBinary(0));
        std::vector<NodePtr> args{left, pattern};
        if (AcceptKeyword("escape")) {
          const Token& esc = Peek();
          if (esc.kind != TokenKind::kString) return Unexpected("a string literal after ESCAPE");
          if (esc.text.size() != 1) return SyntaxError(esc.line, esc.column, "the ESCAPE string must be one character");
          Next();
          args.push_back(StringLiteral(esc.text, esc));
        }
        left = CallAt(name, std::move(args), *left, negated);
      } else if (AcceptKeyword("rlike") || AcceptKeyword("regexp")) {
        SLUICE_ASSIGN_OR_RETURN(NodePtr pattern, ParseBinary(0));
        left = CallAt("rlike", {left, pattern}, *left, negated);
      } else if (negated) {
        return Unexpected("IN, BETWEEN, LIKE or RLIKE after NOT");
      } else {
        return left;
      }
      SLUICE_RETURN_IF_ERROR(CheckHeight(left));
    }
  }

  // Binding power of a binary operator at the current token, or -1.
  int BinaryPower(const Token& t, std::string* name) const {
    if (t.kind == TokenKind::kSymbol) {
      const std::string& s = t.text;
      if (s == "=" || s == "==") return *name = "=", 10;
      if (s == "<=>" || s == "<" || s == "<=" || s == ">" || s == ">=") return *name = s, 10;
      if (s == "!=" || s == "<>") return *name = "!=", 10;
      if (s == "+" || s == "-" || s == "||") return *name = s, 20;
      if (s == "*" || s == "/" || s == "%") return *name = s, 30;
      return -1;
    }
    if (IsKeyword(t, "div")) return *name = "div", 30;
    return -1;
  }

  Result<NodePtr> ParseBinary(int min_power) {
    DepthGuard guard(&depth_);
    SLUICE_RETURN_IF_ERROR(CheckDepth());
    SLUICE_ASSIGN_OR_RETURN(NodePtr left, ParseUnary());
    while (true) {
      std::string name;
      int power = BinaryPower(Peek(), &name);
      if (power < 0 || power < min_power) return left;
      Next();
      SLUICE_ASSIGN_OR_RETURN(NodePtr right, ParseBinary(power + 1));
      left = CallAt(name, {left, right}, *left);
      SLUICE_RETURN_IF_ERROR(CheckHeight(left));
    }
  }

  Result<NodePtr> ParseUnary() {
    DepthGuard guard(&depth_);
    SLUICE_RETURN_IF_ERROR(CheckDepth());
    if (IsSymbol(Peek(), "-") || IsSymbol(Peek(), "+")) {
      Token op = Next();
      // As in Spark's grammar (`number: MINUS? INTEGER_VALUE | ...`), a minus before a numeric
      // literal belongs to the literal: -2147483648 is an int and -128Y a tinyint, in range.
      if (op.text == "-" && Peek().kind == TokenKind::kNumber) return ParsePostfixOf(ParseNumber(Next(), true));
      SLUICE_ASSIGN_OR_RETURN(NodePtr operand, ParseUnary());
      // Unary plus is Spark's positive(): type-checked, not dropped.
      return Call(op.text == "+" ? "positive" : "negative", {operand}, op);
    }
    return ParsePostfix();
  }

  Result<NodePtr> ParsePostfix() { return ParsePostfixOf(ParsePrimary()); }

  Result<NodePtr> ParsePostfixOf(Result<NodePtr> primary) {
    SLUICE_ASSIGN_OR_RETURN(NodePtr node, std::move(primary));
    while (true) {
      if (IsSymbol(Peek(), ".")) {
        Next();
        const Token& t = Peek();
        if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedWord) return Unexpected("a field name after '.'");
        std::string field = Next().text;
        if (node->kind == NodeKind::kColumn) {
          auto extended = std::make_shared<Node>(*node);
          extended->path.push_back(std::move(field));
          node = extended;
        } else {
          node = CallAt("get_field", {node, StringLiteral(field, t)}, *node);
        }
      } else if (IsSymbol(Peek(), "[")) {
        Next();
        SLUICE_ASSIGN_OR_RETURN(NodePtr index, ParseExpr());
        SLUICE_RETURN_IF_ERROR(ExpectSymbol("]"));
        node = CallAt("subscript", {node, index}, *node);
      } else if (IsSymbol(Peek(), "::")) {
        Next();
        SLUICE_ASSIGN_OR_RETURN(TypePtr type, ParseDataType());
        auto cast = std::make_shared<Node>();
        cast->kind = NodeKind::kCast;
        cast->line = node->line;
        cast->column = node->column;
        cast->args = {node};
        cast->cast_type = std::move(type);
        node = Sealed(std::move(cast));
      } else {
        return node;
      }
      SLUICE_RETURN_IF_ERROR(CheckHeight(node));
    }
  }

  static NodePtr StringLiteral(std::string text, const Token& at) {
    auto n = NewNode(NodeKind::kLiteral, at);
    n->literal.type = DataType::String();
    n->literal.text = std::move(text);
    return n;
  }

  Result<NodePtr> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kEnd: return Unexpected("an expression");
      case TokenKind::kNumber: return ParseNumber(Next(), false);
      case TokenKind::kString: {
        Token first = Next();
        std::string text = first.text;
        while (Peek().kind == TokenKind::kString) text += Next().text;  // 'a' 'b' is 'ab'
        return StringLiteral(std::move(text), first);
      }
      case TokenKind::kQuotedWord: {
        auto n = NewNode(NodeKind::kColumn, t);
        n->path.push_back(Next().text);
        return Sealed(std::move(n));
      }
      case TokenKind::kSymbol:
        if (IsSymbol(t, "(")) {
          Next();
          SLUICE_ASSIGN_OR_RETURN(NodePtr inner, ParseExpr());
          SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
          return inner;
        }
        if (IsSymbol(t, "*")) return Unexpected("an expression ('*' is allowed only in count(*))");
        return Unexpected("an expression");
      case TokenKind::kWord: return ParseWordPrimary();
    }
    return Unexpected("an expression");
  }

  Result<NodePtr> ParseWordPrimary() {
    Token t = Peek();
    std::string word = AsciiLower(t.text);
    const Token& after = Peek(1);
    if (word == "null" || word == "true" || word == "false") {
      Next();
      auto n = NewNode(NodeKind::kLiteral, t);
      if (word == "null") {
        n->literal.is_null = true;
      } else {
        n->literal.type = DataType::Boolean();
        n->literal.boolean = word == "true";
      }
      return Sealed(std::move(n));
    }
    if (word == "case") return ParseCase();
    if ((word == "cast" || word == "try_cast") && IsSymbol(after, "(")) return ParseCast();
    if ((word == "date" || word == "timestamp" || word == "timestamp_ntz" || word == "timestamp_ltz") &&
        after.kind == TokenKind::kString) {
      return ParseTypedLiteral();
    }
    if ((word == "x") && after.kind == TokenKind::kString && after.offset == t.offset + 1) return ParseBinaryLiteral();
    if (word == "interval") return ParseInterval();
    if (IsSymbol(after, "(")) return ParseFunction();
    if ((word == "current_date" || word == "current_timestamp")) {
      Next();
      return Call(word, {}, t);
    }
    if (IsReservedWord(word)) return Unexpected("an expression");
    Next();
    auto n = NewNode(NodeKind::kColumn, t);
    n->path.push_back(t.text);
    return Sealed(std::move(n));
  }

  Result<NodePtr> ParseNumber(const Token& t, bool negative) {
    std::string text = t.text;
    std::string suffix;
    if (text.size() >= 2 && EqualsIgnoreCase(text.substr(text.size() - 2), "bd")) {
      suffix = "bd";
      text.resize(text.size() - 2);
    } else if (std::isalpha(static_cast<unsigned char>(text.back())) && text.back() != 'e' && text.back() != 'E') {
      suffix = AsciiLower(text.substr(text.size() - 1));
      text.pop_back();
    }
    auto n = NewNode(NodeKind::kLiteral, t);
    LiteralValue& v = n->literal;
    bool has_exponent = text.find_first_of("eE") != std::string::npos;
    bool has_point = text.find('.') != std::string::npos;
    auto out_of_range = [&](std::string_view type) {
      return SyntaxError(t.line, t.column, fmt::format("numeric literal {} is out of range for {}", t.text, type));
    };
    if (suffix == "d" || suffix == "f" || (has_exponent && suffix.empty())) {
      double d = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(d)) return out_of_range("double");
      if (negative) d = -d;
      if (suffix == "f") {
        v.type = DataType::Float();
        if (std::fabs(d) > 3.4028234663852886e38) return out_of_range("float");
      } else {
        v.type = DataType::Double();
      }
      v.floating = d;
      return Sealed(std::move(n));
    }
    if (has_point || has_exponent || suffix == "bd") {
      return DecimalLiteral(n, text, t, negative);
    }
    // Integral.
    // The largest decimal(38,0), 10^38 - 1; checked before each step, so the sum never overflows.
    constexpr int128_t kMaxDecimal = [] {
      int128_t power = 1;
      for (int i = 0; i < 38; ++i) power *= 10;
      return power - 1;
    }();
    int128_t value = 0;
    for (char c : text) {
      if (value > (kMaxDecimal - (c - '0')) / 10) return out_of_range("decimal(38,0)");
      value = value * 10 + (c - '0');
    }
    // A negative literal reaches one further: -128Y is a tinyint.
    const int128_t extra = negative ? 1 : 0;
    if (suffix == "l") {
      if (value > INT64_MAX + extra) return out_of_range("bigint");
      v.type = DataType::Long();
    } else if (suffix == "s") {
      if (value > INT16_MAX + extra) return out_of_range("smallint");
      v.type = DataType::Short();
    } else if (suffix == "y") {
      if (value > INT8_MAX + extra) return out_of_range("tinyint");
      v.type = DataType::Byte();
    } else if (value <= INT32_MAX + extra) {
      v.type = DataType::Integer();
    } else if (value <= INT64_MAX + extra) {
      v.type = DataType::Long();
    } else {
      return DecimalLiteral(n, text, t, negative);
    }
    v.integer = static_cast<int64_t>(negative ? -value : value);
    return Sealed(std::move(n));
  }

  Result<NodePtr> DecimalLiteral(std::shared_ptr<Node> n, const std::string& text, const Token& t, bool negative) {
    std::string mantissa = text;
    int exponent = 0;
    size_t e = text.find_first_of("eE");
    if (e != std::string::npos) {
      mantissa = text.substr(0, e);
      int parsed = 0;
      std::string_view exp_text(text.data() + e + 1, text.size() - e - 1);
      if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
      auto [p, ec] = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), parsed);
      if (ec != std::errc() || p != exp_text.data() + exp_text.size() || parsed > 100 || parsed < -100) {
        return SyntaxError(t.line, t.column, fmt::format("malformed decimal literal {}", t.text));
      }
      exponent = parsed;
    }
    size_t point = mantissa.find('.');
    std::string digits = mantissa;
    int scale = 0;
    if (point != std::string::npos) {
      digits = mantissa.substr(0, point) + mantissa.substr(point + 1);
      scale = static_cast<int>(mantissa.size() - point - 1);
    }
    scale -= exponent;
    if (scale < 0) {
      digits.append(static_cast<size_t>(-scale), '0');
      scale = 0;
    }
    size_t first = digits.find_first_not_of('0');
    std::string significant = first == std::string::npos ? "" : digits.substr(first);
    int precision = std::max<int>(static_cast<int>(significant.size()), 1);
    precision = std::max(precision, scale);
    if (precision > 38) {
      return SyntaxError(t.line, t.column, fmt::format("decimal literal {} has more than 38 digits", t.text));
    }
    int128_t value = 0;
    for (char c : significant) value = value * 10 + (c - '0');
    SLUICE_ASSIGN_OR_RETURN(n->literal.type, DataType::Decimal(precision, scale));
    n->literal.decimal = negative ? -value : value;
    return Sealed(std::move(n));
  }

  Result<NodePtr> ParseTypedLiteral() {
    Token kw = Next();
    Token str = Next();
    std::string word = AsciiLower(kw.text);
    auto n = NewNode(NodeKind::kLiteral, kw);
    if (word == "date") {
      auto days = ParseDate(str.text);
      if (!days) return SyntaxError(str.line, str.column, fmt::format("cannot parse the DATE literal '{}'", str.text));
      n->literal.type = DataType::Date();
      n->literal.integer = *days;
    } else {
      auto micros = ParseTimestamp(str.text);
      if (!micros) {
        return SyntaxError(str.line, str.column, fmt::format("cannot parse the TIMESTAMP literal '{}'", str.text));
      }
      n->literal.type = word == "timestamp_ntz" ? DataType::TimestampNtz() : DataType::Timestamp();
      n->literal.integer = *micros;
    }
    return Sealed(std::move(n));
  }

  Result<NodePtr> ParseBinaryLiteral() {
    Token kw = Next();
    Token str = Next();
    if (str.text.size() % 2 != 0) return SyntaxError(str.line, str.column, "a binary literal needs an even number of hex digits");
    std::string bytes;
    for (size_t i = 0; i < str.text.size(); i += 2) {
      int value = 0;
      auto [p, ec] = std::from_chars(str.text.data() + i, str.text.data() + i + 2, value, 16);
      if (ec != std::errc() || p != str.text.data() + i + 2) {
        return SyntaxError(str.line, str.column, "a binary literal holds only hex digits");
      }
      bytes += static_cast<char>(value);
    }
    auto n = NewNode(NodeKind::kLiteral, kw);
    n->literal.type = DataType::Binary();
    n->literal.text = std::move(bytes);
    return Sealed(std::move(n));
  }

  // INTERVAL <n> <unit> [<n> <unit> ...]; n is a number or a quoted number, optionally signed.
  Result<NodePtr> ParseInterval() {
    Token kw = Next();
    auto n = NewNode(NodeKind::kLiteral, kw);
    n->literal.is_interval = true;
    int parts = 0;
    while (true) {
      const Token& t = Peek();
      bool negative = false;
      std::string number;
      if (IsSymbol(t, "-") && Peek(1).kind == TokenKind::kNumber) {
        Next();
        negative = true;
        number = Next().text;
      } else if (t.kind == TokenKind::kNumber) {
        number = Next().text;
      } else if (t.kind == TokenKind::kString) {
        number = Next().text;
        if (!number.empty() && (number[0] == '-' || number[0] == '+')) {
          negative = number[0] == '-';
          number.erase(0, 1);
        }
      } else {
        break;
      }
      const Token& unit_token = Peek();
      if (unit_token.kind != TokenKind::kWord) return Unexpected("an interval unit (YEAR, MONTH, DAY, HOUR, ...)");
      std::string unit = AsciiLower(Next().text);
      if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
      double amount = 0;
      auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), amount);
      if (ec != std::errc() || p != number.data() + number.size() || !std::isfinite(amount) || std::fabs(amount) > 1e12) {
        return SyntaxError(t.line, t.column, fmt::format("malformed interval value '{}'", number));
      }
      if (negative) amount = -amount;
      LiteralValue& v = n->literal;
      if (unit == "year") v.interval_months += static_cast<int32_t>(amount * 12);
      else if (unit == "month") v.interval_months += static_cast<int32_t>(amount);
      else if (unit == "week") v.interval_micros += static_cast<int64_t>(amount * 7 * kMicrosPerDay);
      else if (unit == "day") v.interval_micros += static_cast<int64_t>(amount * kMicrosPerDay);
      else if (unit == "hour") v.interval_micros += static_cast<int64_t>(amount * 3600 * kMicrosPerSecond);
      else if (unit == "minute") v.interval_micros += static_cast<int64_t>(amount * 60 * kMicrosPerSecond);
      else if (unit == "second") v.interval_micros += static_cast<int64_t>(std::llround(amount * kMicrosPerSecond));
      else if (unit == "millisecond") v.interval_micros += static_cast<int64_t>(std::llround(amount * 1000));
      else if (unit == "microsecond") v.interval_micros += static_cast<int64_t>(amount);
      else return SyntaxError(unit_token.line, unit_token.column, fmt::format("unknown interval unit '{}'", unit_token.text));
      ++parts;
    }
    if (parts == 0) return Unexpected("an interval value after INTERVAL");
    return Sealed(std::move(n));
  }

  Result<NodePtr> ParseCase() {
    Token kw = Next();
    auto n = NewNode(NodeKind::kCase, kw);
    if (!IsKeyword(Peek(), "when")) {
      SLUICE_ASSIGN_OR_RETURN(NodePtr operand, ParseExpr());
      n->args.push_back(std::move(operand));
      n->case_has_operand = true;
    }
    if (!IsKeyword(Peek(), "when")) return Unexpected("WHEN");
    while (AcceptKeyword("when")) {
      SLUICE_ASSIGN_OR_RETURN(NodePtr when, ParseExpr());
      SLUICE_RETURN_IF_ERROR(ExpectKeyword("then"));
      SLUICE_ASSIGN_OR_RETURN(NodePtr then, ParseExpr());
      n->args.push_back(std::move(when));
      n->args.push_back(std::move(then));
    }
    if (AcceptKeyword("else")) {
      SLUICE_ASSIGN_OR_RETURN(NodePtr otherwise, ParseExpr());
      n->args.push_back(std::move(otherwise));
      n->case_has_else = true;
    }
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("end"));
    return Sealed(std::move(n));
  }

  Result<NodePtr> ParseCast() {
    Token kw = Next();
    Next();  // (
    auto n = NewNode(NodeKind::kCast, kw);
    n->try_cast = EqualsIgnoreCase(kw.text, "try_cast");
    SLUICE_ASSIGN_OR_RETURN(NodePtr operand, ParseExpr());
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("as"));
    SLUICE_ASSIGN_OR_RETURN(n->cast_type, ParseDataType());
    SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
    n->args.push_back(std::move(operand));
    return Sealed(std::move(n));
  }

  // A type name with its parameters ("decimal(10,2)", "array<struct<a:int>>"): the tokens are
  // delimited here and their source text handed to the type-string parser.
  Result<TypePtr> ParseDataType() {
    const Token& start = Peek();
    if (start.kind != TokenKind::kWord) return Unexpected("a data type");
    Next();
    size_t end = start.offset + start.text.size();
    if (IsSymbol(Peek(), "(")) {
      while (!IsSymbol(Peek(), ")")) {
        if (Peek().kind == TokenKind::kEnd) return Unexpected("')'");
        Next();
      }
      end = Next().offset + 1;
    } else if (IsSymbol(Peek(), "<") || IsSymbol(Peek(), "<>")) {
      int open = 0;
      do {
        const Token& t = Peek();
        if (t.kind == TokenKind::kEnd) return Unexpected("'>'");
        if (IsSymbol(t, "<")) ++open;
        if (IsSymbol(t, ">")) --open;
        end = t.offset + t.text.size();
        Next();
      } while (open > 0);
    }
    std::string_view text = src_.substr(start.offset, end - start.offset);
    Result<TypePtr> type = ParseTypeString(text);
    if (!type.ok()) {
      return SyntaxError(start.line, start.column, fmt::format("unknown data type '{}': {}", text, type.status().message()));
    }
    return type;
  }

  Result<NodePtr> ParseFunction() {
    Token name_token = Next();
    Next();  // (
    std::string name = AsciiLower(name_token.text);
    auto n = NewNode(NodeKind::kCall, name_token);
    n->name = name;
    if (IsSymbol(Peek(), "*") && IsSymbol(Peek(1), ")")) {
      n->args.push_back(NewNode(NodeKind::kStar, Next()));
      Next();
      return Sealed(std::move(n));
    }
    if ((name == "trim" || name == "ltrim" || name == "rtrim") &&
        (IsKeyword(Peek(), "both") || IsKeyword(Peek(), "leading") || IsKeyword(Peek(), "trailing") ||
         IsKeyword(Peek(), "from"))) {
      return ParseTrim(n);
    }
    if (name == "extract" && IsParameter(Peek()) && IsKeyword(Peek(1), "from")) {
      // extract(FIELD FROM source) is date_part('FIELD', source).
      n->name = "date_part";
      const Token field = Next();
      n->args.push_back(StringLiteral(field.text, field));
      Next();  // FROM
      SLUICE_ASSIGN_OR_RETURN(NodePtr source, ParseExpr());
      n->args.push_back(std::move(source));
      SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
      return Sealed(std::move(n));
    }
    if (AcceptKeyword("distinct")) n->distinct = true;
    if (!IsSymbol(Peek(), ")")) {
      do {
        SLUICE_ASSIGN_OR_RETURN(NodePtr arg, IsLambdaAhead() ? ParseLambda() : ParseExpr());
        n->args.push_back(std::move(arg));
        // struct(x AS a, ...) names its fields, as Spark's grammar reads struct's arguments.
        if (name == "struct" && AcceptKeyword("as")) {
          if (!IsParameter(Peek())) return Unexpected("a field name after AS");
          n->aliases.resize(n->args.size());
          n->aliases.back() = Next().text;
        }
        // substring(s FROM pos [FOR len]) and overlay(s PLACING replace FROM pos [FOR len]) are
        // the calls substring(s, pos[, len]) and overlay(s, replace, pos[, len]).
        const bool substring = (name == "substring" || name == "substr") && n->args.size() == 1;
        const bool overlay = name == "overlay" && n->args.size() == 1;
        if ((substring && AcceptKeyword("from")) || (overlay && AcceptKeyword("placing"))) {
          if (overlay) {
            SLUICE_ASSIGN_OR_RETURN(NodePtr replace, ParseExpr());
            n->args.push_back(std::move(replace));
            SLUICE_RETURN_IF_ERROR(ExpectKeyword("from"));
          }
          SLUICE_ASSIGN_OR_RETURN(NodePtr pos, ParseExpr());
          n->args.push_back(std::move(pos));
          if (AcceptKeyword("for")) {
            SLUICE_ASSIGN_OR_RETURN(NodePtr length, ParseExpr());
            n->args.push_back(std::move(length));
          }
          break;
        }
        if (name == "trim" && n->args.size() == 1 && AcceptKeyword("from")) {
          SLUICE_ASSIGN_OR_RETURN(NodePtr str, ParseExpr());
          n->args.insert(n->args.begin(), std::move(str));
          break;
        }
      } while (AcceptSymbol(","));
    }
    SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
    if (!n->aliases.empty()) n->aliases.resize(n->args.size());
    return Sealed(std::move(n));
  }

  bool IsParameter(const Token& t) const {
    return t.kind == TokenKind::kQuotedWord || (t.kind == TokenKind::kWord && !IsReservedWord(t.text));
  }

  // Whether a lambda starts here: `x ->` or `(x, y, ...) ->`.
  bool IsLambdaAhead() const {
    if (IsParameter(Peek()) && IsSymbol(Peek(1), "->")) return true;
    if (!IsSymbol(Peek(), "(")) return false;
    size_t i = 1;
    while (IsParameter(Peek(i))) {
      if (IsSymbol(Peek(i + 1), ")")) return IsSymbol(Peek(i + 2), "->");
      if (!IsSymbol(Peek(i + 1), ",")) return false;
      i += 2;
    }
    return false;
  }

  // A lambda function argument: parameters, `->`, the body.
  Result<NodePtr> ParseLambda() {
    auto n = NewNode(NodeKind::kLambda, Peek());
    const bool parenthesized = AcceptSymbol("(");
    do {
      const Token& parameter = Next();
      for (const std::string& seen : n->path) {
        if (EqualsIgnoreCase(seen, parameter.text)) {
          return SyntaxError(parameter.line, parameter.column,
                             fmt::format("the lambda parameter {} is named twice", QuoteIdentifier(parameter.text)));
        }
      }
      n->path.push_back(parameter.text);
    } while (parenthesized && AcceptSymbol(","));
    if (parenthesized) SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
    SLUICE_RETURN_IF_ERROR(ExpectSymbol("->"));
    SLUICE_ASSIGN_OR_RETURN(NodePtr body, ParseExpr());
    n->args.push_back(std::move(body));
    return Sealed(std::move(n));
  }

  // trim([BOTH | LEADING | TRAILING] [chars] FROM str) -> trim/ltrim/rtrim(str, chars).
  Result<NodePtr> ParseTrim(std::shared_ptr<Node> n) {
    if (AcceptKeyword("leading")) n->name = "ltrim";
    else if (AcceptKeyword("trailing")) n->name = "rtrim";
    else AcceptKeyword("both");
    NodePtr chars;
    if (!IsKeyword(Peek(), "from")) {
      SLUICE_ASSIGN_OR_RETURN(chars, ParseExpr());
    }
    SLUICE_RETURN_IF_ERROR(ExpectKeyword("from"));
    SLUICE_ASSIGN_OR_RETURN(NodePtr str, ParseExpr());
    SLUICE_RETURN_IF_ERROR(ExpectSymbol(")"));
    n->args.push_back(std::move(str));
    if (chars) n->args.push_back(std::move(chars));
    return Sealed(std::move(n));
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<NodePtr> ParseTree(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(sql).Run());
  Parser parser(sql, std::move(tokens));
  return parser.ParseWhole();
}

Result<SelectTree> ParseSelectTree(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(sql).Run());
  Parser parser(sql, std::move(tokens));
  return parser.ParseSelect();
}

Result<DmlStatement> ParseDml(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(sql).Run());
  Parser parser(sql, std::move(tokens));
  return parser.ParseDmlStatement();
}

Result<MergeClause> ParseMergeAction(MergeMatch match, std::string_view action) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(action).Run());
  Parser parser(action, std::move(tokens));
  return parser.ParseActionOnly(match);
}

Status CheckMergeClauses(const std::vector<MergeClause>& clauses) {
  if (clauses.empty()) {
    return Status::Error(errors::kParseSyntaxError, "a MERGE needs at least one WHEN clause");
  }
  for (size_t i = 0; i < clauses.size(); ++i) {
    if (clauses[i].condition) continue;
    for (size_t j = i + 1; j < clauses.size(); ++j) {
      if (clauses[j].match != clauses[i].match) continue;
      switch (clauses[i].match) {
        case MergeMatch::kMatched:
          return Status::Error(errors::kNonLastMatchedClauseOmitCondition,
                               "when there are more than one WHEN MATCHED clauses in a MERGE, only the last one "
                               "can omit the condition");
        case MergeMatch::kNotMatched:
          return Status::Error(errors::kNonLastNotMatchedByTargetClauseOmitCondition,
                               "when there are more than one WHEN NOT MATCHED [BY TARGET] clauses in a MERGE, "
                               "only the last one can omit the condition");
        case MergeMatch::kNotMatchedBySource:
          return Status::Error(errors::kNonLastNotMatchedBySourceClauseOmitCondition,
                               "when there are more than one WHEN NOT MATCHED BY SOURCE clauses in a MERGE, "
                               "only the last one can omit the condition");
      }
    }
  }
  return Status::OK();
}

Result<NamedTree> ParseNamedTree(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(sql).Run());
  Parser parser(sql, std::move(tokens));
  return parser.ParseNamed();
}

}  // namespace sluice::expr
