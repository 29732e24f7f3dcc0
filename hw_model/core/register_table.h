// A register file as a table, the way a datasheet lists it: each register at its offset with its access
// and its handlers, declared by the model that owns the state behind it (the CMP declares its fence
// table and queue registers, the BAR declares the adapter's). Blocks repeated per instance (one per HW
// queue, one per node) are declared once with their stride and count; decoding an offset into (block,
// index, register) happens here and nowhere else.
//
// A read of a write-only register returns 0 and a write to a read-only one is dropped, as on hardware;
// so are accesses to offsets no register occupies.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpumodel {

class RegisterTable {
 public:
  enum Access : unsigned { R = 1, W = 2, RW = 3 };
  // `index`: which copy of a repeated block (0 for a single register).
  using ReadFn = std::function<uint64_t(unsigned index)>;
  using WriteFn = std::function<void(unsigned index, uint64_t value, unsigned len)>;

  struct Register {
    uint64_t offset;  // within its block
    const char* name;
    Access access;
    ReadFn read;
    WriteFn write;
  };

  // A block of `count` copies `stride` bytes apart from `base`; its registers are added with reg().
  class Block {
   public:
    Block& reg(uint64_t offset, const char* name, Access access, ReadFn read = nullptr, WriteFn write = nullptr) {
      if (stride_ && offset >= stride_) throw std::logic_error(std::string(name) + ": offset beyond its block");
      auto at = std::lower_bound(regs_.begin(), regs_.end(), offset,
                                 [](const Register& r, uint64_t o) { return r.offset < o; });
      if (at != regs_.end() && at->offset == offset) throw std::logic_error(std::string(name) + ": offset taken");
      if ((access & R) && !read) throw std::logic_error(std::string(name) + ": readable without a read handler");
      if ((access & W) && !write) throw std::logic_error(std::string(name) + ": writable without a write handler");
      regs_.insert(at, Register{offset, name, access, std::move(read), std::move(write)});
      return *this;
    }

   private:
    friend class RegisterTable;
    Block(uint64_t base, uint64_t stride, unsigned count) : base_(base), stride_(stride), count_(count) {}
    bool repeated() const { return stride_ != 0; }
    bool contains(uint64_t off) const { return off >= base_ && off - base_ < stride_ * count_; }
    // The register at `off` (null: none) and the copy it belongs to.
    const Register* find(uint64_t off, unsigned& index) const {
      const uint64_t rel = off - base_;
      index = repeated() ? unsigned(rel / stride_) : 0;
      const uint64_t in_block = repeated() ? rel % stride_ : rel;
      auto at = std::lower_bound(regs_.begin(), regs_.end(), in_block,
                                 [](const Register& r, uint64_t o) { return r.offset < o; });
      return at != regs_.end() && at->offset == in_block ? &*at : nullptr;
    }
    uint64_t base_, stride_;
    unsigned count_;
    std::vector<Register> regs_;  // sorted by offset
  };

  // Single registers at absolute offsets (a block of one copy, based at 0, without a stride).
  Block& single() { return block(0, 0, 1); }
  // A repeated block: the copy `i` of register `r` is at base + i * stride + r.offset.
  Block& block(uint64_t base, uint64_t stride, unsigned count) {
    for (auto& b : blocks_)
      if (b.base_ == base && b.stride_ == stride && b.count_ == count) return b;
    blocks_.push_back(Block(base, stride, count));
    return blocks_.back();
  }

  uint64_t read(uint64_t off) const {
    unsigned i = 0;
    const Register* r = find(off, i);
    return r && (r->access & R) ? r->read(i) : 0;
  }
  void write(uint64_t off, uint64_t value, unsigned len) const {
    unsigned i = 0;
    const Register* r = find(off, i);
    if (r && (r->access & W)) r->write(i, value, len);
  }

 private:
  // Repeated blocks first (they occupy ranges), then the single registers.
  const Register* find(uint64_t off, unsigned& index) const {
    for (auto& b : blocks_)
      if (b.repeated() && b.contains(off)) return b.find(off, index);
    for (auto& b : blocks_)
      if (!b.repeated())
        if (const Register* r = b.find(off, index)) return r;
    return nullptr;
  }
  std::deque<Block> blocks_;  // stable references; a handful: the adapter's registers, nodes, doorbells, HW queues
};

}  // namespace gpumodel
