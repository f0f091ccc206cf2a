/* The one door to assimp (assimp_read.h): an Assimp::Importer stripped to
 * one importer, reading through render's file callbacks. */
#include "assimp_read.h"

#include <assimp/BaseImporter.h>
#include <assimp/IOStream.hpp>
#include <assimp/IOSystem.hpp>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/importerdesc.h>
#include <assimp/postprocess.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

/* assimp's own names for the importers render keeps (aiImporterDesc),
 * by rt__format. Whichever importer has another name, glTF 1.0's "glTF
 * Importer" among them, is taken out. */
const char *const kept_importer[] = {"glTF2 Importer", "Wavefront Object Importer",
                                     "Stanford Polygon Library (PLY) Importer"};

/* One file opened through the C callbacks (aiFileIO), as assimp's C API
 * wraps them: the same calls, in C++ clothes. */
class CallbackStream : public Assimp::IOStream
{
  public:
    CallbackStream(aiFileIO *io, aiFile *f) : io_(io), f_(f)
    {
    }
    ~CallbackStream() override
    {
        io_->CloseProc(io_, f_);
    }
    size_t Read(void *buf, size_t size, size_t count) override
    {
        return f_->ReadProc(f_, static_cast<char *>(buf), size, count);
    }
    size_t Write(const void *, size_t, size_t) override
    {
        return 0;
    } /* read only */
    aiReturn Seek(size_t offset, aiOrigin origin) override
    {
        return f_->SeekProc(f_, offset, origin);
    }
    size_t Tell() const override
    {
        return f_->TellProc(f_);
    }
    size_t FileSize() const override
    {
        return f_->FileSizeProc(f_);
    }
    void Flush() override
    {
    }

  private:
    aiFileIO *io_;
    aiFile   *f_;
};

class CallbackSystem : public Assimp::IOSystem
{
  public:
    explicit CallbackSystem(aiFileIO *io) : io_(io)
    {
    }
    bool Exists(const char *path) const override
    {
        aiFile *f = io_->OpenProc(io_, path, "rb");
        if (f)
            io_->CloseProc(io_, f);
        return f != nullptr;
    }
    char getOsSeparator() const override
    {
        return '/';
    }
    Assimp::IOStream *Open(const char *path, const char *mode) override
    {
        aiFile *f = io_->OpenProc(io_, path, mode);
        if (!f)
            return nullptr;
        CallbackStream *s = new (std::nothrow) CallbackStream(io_, f);
        if (!s)
            io_->CloseProc(io_, f);
        return s;
    }
    void Close(Assimp::IOStream *s) override
    {
        delete s;
    }

  private:
    aiFileIO *io_;
};

/* Takes every importer but the one for `format` out of the import, and
 * deletes it (assimp hands an unregistered importer back to its caller).
 * Throws when that one is not there (an assimp that renamed it). */
void
keep_only(Assimp::Importer &im, rt__format format)
{
    std::vector<Assimp::BaseImporter *> gone;
    for (size_t i = 0; i < im.GetImporterCount(); i++) {
        Assimp::BaseImporter *b = im.GetImporter(i);
        const aiImporterDesc *d = im.GetImporterInfo(i);
        if (!d || std::strcmp(d->mName, kept_importer[format]) != 0)
            gone.push_back(b);
    }
    for (Assimp::BaseImporter *b : gone) {
        im.UnregisterLoader(b);
        delete b;
    }
    if (im.GetImporterCount() != 1)
        throw std::runtime_error(std::string("this assimp has no ") + kept_importer[format]);
}

void
say(char err[RT_ERR_LEN], const char *what)
{
    std::snprintf(err, RT_ERR_LEN, "%s", what && *what ? what : "unknown error");
}

} // namespace

struct rt__ai {
    Assimp::Importer importer;
};

/* step(), with whatever it throws said in err: the scene, or NULL. */
template <typename Step>
const aiScene *
guarded(rt__ai *a, char err[RT_ERR_LEN], Step step)
{
    try {
        const aiScene *s = step();
        if (!s)
            say(err, a->importer.GetErrorString());
        return s;
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
    } catch (const std::exception &e) {
        say(err, e.what());
    }
    return nullptr;
}

extern "C" const struct aiScene *
rt__ai_read(const char *path, rt__format format, aiFileIO *io, int remove, rt__ai **imp,
            char err[RT_ERR_LEN])
{
    *imp = nullptr;
    try {
        *imp = new rt__ai; /* the Importer's constructor allocates its ~60 importers */
    } catch (const std::exception &) {
        say(err, "out of memory");
        return nullptr;
    }
    rt__ai *a = *imp;
    return guarded(a, err, [&] {
        /* The importer deletes the IOSystem it is given: it gets a
         * forwarder of its own to delete. */
        a->importer.SetIOHandler(new CallbackSystem(io));
        a->importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, remove);
        keep_only(a->importer, format);
        return a->importer.ReadFile(path, aiProcess_ValidateDataStructure);
    });
}

extern "C" const struct aiScene *
rt__ai_post(rt__ai *imp, unsigned flags, char err[RT_ERR_LEN])
{
    return guarded(imp, err, [&] { return imp->importer.ApplyPostProcessing(flags); });
}

extern "C" void
rt__ai_free(rt__ai *imp)
{
    delete imp;
}
