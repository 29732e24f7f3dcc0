// The register table alone (no SystemC process, no platform): how an offset decodes into a block, a copy
// and a register; what access allows; what a declaration may not do. BAR0 and the CMP declare their
// registers in one (H2: the KMD programs the adapter only through these registers).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "hw_model/core/register_table.h"

using gpumodel::RegisterTable;
using A = RegisterTable;

namespace {
struct Written {
  unsigned index;
  uint64_t value;
  unsigned len;
};
}  // namespace

TEST_CASE("Register table: single registers decode by offset, repeated blocks by copy and offset", "[H2]") {
  RegisterTable t;
  std::vector<Written> ctl, db;
  uint64_t id_reads = 0;
  t.single()
      .reg(0x00, "ID", A::R,
           [&](unsigned i) {
             ++id_reads;
             return 0x1234u + i;
           })
      .reg(
          0x08, "CTL", A::RW, [](unsigned) { return 7u; },
          [&](unsigned i, uint64_t v, unsigned len) {
            ctl.push_back({i, v, len});
          });
  t.block(0x1000, 0x40, 4)
      .reg(0x10, "Q_VALUE", A::R, [](unsigned q) { return 100u + q; })
      .reg(0x18, "Q_DOOR", A::W, nullptr, [&](unsigned q, uint64_t v, unsigned len) {
        db.push_back({q, v, len});
      });

  CHECK(t.read(0x00) == 0x1234);  // a single register is copy 0
  CHECK(id_reads == 1);
  CHECK(t.read(0x08) == 7);
  t.write(0x08, 0xAB, 4);
  REQUIRE(ctl.size() == 1);
  CHECK((ctl[0].index == 0 && ctl[0].value == 0xAB && ctl[0].len == 4));

  // copy q's register r at base + q * stride + r
  CHECK(t.read(0x1000 + 0 * 0x40 + 0x10) == 100);
  CHECK(t.read(0x1000 + 3 * 0x40 + 0x10) == 103);
  t.write(0x1000 + 2 * 0x40 + 0x18, 55, 8);
  REQUIRE(db.size() == 1);
  CHECK((db[0].index == 2 && db[0].value == 55 && db[0].len == 8));

  // Past the last copy, between registers, and at no register: nothing.
  CHECK(t.read(0x1000 + 4 * 0x40 + 0x10) == 0);
  CHECK(t.read(0x1000 + 1 * 0x40 + 0x14) == 0);
  CHECK(t.read(0x04) == 0);
  t.write(0x1000 + 4 * 0x40 + 0x18, 1, 8);
  CHECK(db.size() == 1);
}

TEST_CASE("Register table: a read-only register ignores writes, a write-only one reads as zero", "[H2]") {
  RegisterTable t;
  int writes = 0;
  t.single()
      .reg(0x0, "RO", A::R, [](unsigned) { return 5u; })
      .reg(0x8, "WO", A::W, nullptr, [&](unsigned, uint64_t, unsigned) { ++writes; });
  t.write(0x0, 9, 4);  // dropped, and the read handler is not a write handler
  CHECK(t.read(0x0) == 5);
  CHECK(t.read(0x8) == 0);
  t.write(0x8, 1, 4);
  CHECK(writes == 1);
}

TEST_CASE("Register table: a block of one copy covers its stride only", "[H2]") {
  // One node: its block must not swallow the single registers or another block's offsets.
  RegisterTable t;
  t.single().reg(0x4000, "OTHER", A::R, [](unsigned) { return 1u; });
  t.block(0x2000, 0x40, 1).reg(0x00, "N_PACKETS", A::R, [](unsigned n) { return 10u + n; });
  CHECK(t.read(0x2000) == 10);
  CHECK(t.read(0x2040) == 0);  // the second copy does not exist
  CHECK(t.read(0x4000) == 1);
}

TEST_CASE("Register table: a declaration that cannot decode is refused", "[H2]") {
  RegisterTable t;
  auto& b = t.block(0x1000, 0x40, 2);
  b.reg(0x10, "A", A::R, [](unsigned) { return 0u; });
  CHECK_THROWS_AS(b.reg(0x10, "B", A::R, [](unsigned) { return 0u; }), std::logic_error);  // offset taken
  CHECK_THROWS_AS(b.reg(0x40, "C", A::R, [](unsigned) { return 0u; }), std::logic_error);  // beyond the stride
  CHECK_THROWS_AS(b.reg(0x20, "D", A::R), std::logic_error);                               // no read handler
  CHECK_THROWS_AS(b.reg(0x28, "E", A::W), std::logic_error);                               // no write handler
  CHECK(&t.block(0x1000, 0x40, 2) == &b);  // the same block, not a second one
}
